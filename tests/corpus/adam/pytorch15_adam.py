# expect: failed pitfall=eps-before-correction
# source: look-alike of torch.optim.Adam/AdamW in PyTorch 1.2-1.5: denom = sqrt(exp_avg_sq) + eps, step_size = lr * sqrt(bc2) / bc1
import math

import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            if p.grad is not None:
                p.grad.detach_()
                p.grad.zero_()

    def _prepare(self, p, grad):
        if self.weight_decay != 0:
            grad = grad.add(p.data, alpha=self.weight_decay)
        return grad

    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            grad = self._prepare(p, p.grad.data)
            state = self.state.setdefault(p, {})
            if len(state) == 0:
                state["step"] = 0
                state["exp_avg"] = torch.zeros_like(p.data)
                state["exp_avg_sq"] = torch.zeros_like(p.data)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            beta1, beta2 = self.betas
            state["step"] += 1
            exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = exp_avg_sq.sqrt().add_(self.eps)
            bias_correction1 = 1 - beta1 ** state["step"]
            bias_correction2 = 1 - beta2 ** state["step"]
            step_size = self.lr * math.sqrt(bias_correction2) / bias_correction1
            p.data.addcdiv_(exp_avg, denom, value=-step_size)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _prepare(self, p, grad):
        p.data.mul_(1 - self.lr * self.weight_decay)
        return grad
