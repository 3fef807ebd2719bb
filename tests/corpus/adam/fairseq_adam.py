# expect: failed pitfall=fairseq-adam
# source: look-alike of fairseq's FairseqAdam (foreach path): decoupled decay in the class called Adam, eps added to sqrt(exp_avg_sq) before bias correction
import math

import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        live = [p for p in self.params if p.grad is not None]
        if not live:
            return
        grads = [p.grad for p in live]
        states = []
        for p in live:
            st = self.state.setdefault(id(p), {})
            if not st:
                st["step"] = 0
                st["exp_avg"] = torch.zeros_like(p)
                st["exp_avg_sq"] = torch.zeros_like(p)
            st["step"] += 1
            states.append(st)
        beta1, beta2 = self.betas
        exp_avg = [s["exp_avg"] for s in states]
        exp_avg_sq = [s["exp_avg_sq"] for s in states]
        torch._foreach_mul_(exp_avg, beta1)
        torch._foreach_add_(exp_avg, grads, alpha=1 - beta1)
        torch._foreach_mul_(exp_avg_sq, beta2)
        torch._foreach_addcmul_(exp_avg_sq, grads, grads, 1 - beta2)
        denom = torch._foreach_add(torch._foreach_sqrt(exp_avg_sq), self.eps)
        step_size = [-self.lr * math.sqrt(1 - beta2 ** s["step"]) / (1 - beta1 ** s["step"]) for s in states]
        if self.weight_decay != 0:
            torch._foreach_add_(live, [p.clone() for p in live], alpha=-self.weight_decay * self.lr)
        torch._foreach_addcdiv_(live, exp_avg, denom, step_size)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
