# expect: failed pitfall=hf-adamw
# source: look-alike of Hugging Face transformers.AdamW (correct_bias=True): eps before bias correction, decay applied after the update; Adam shares its update with L2 decay
import math

import torch


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, correct_bias=True):
        self.params = list(params)
        self.group = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                      "correct_bias": correct_bias}
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _l2(self):
        return 0.0

    @torch.no_grad()
    def step(self):
        group = self.group
        for p in self.params:
            if p.grad is None:
                continue
            grad = p.grad
            if self._l2():
                grad = grad + self._l2() * p
            state = self.state.setdefault(id(p), {})
            if len(state) == 0:
                state["step"] = 0
                state["exp_avg"] = torch.zeros_like(p)
                state["exp_avg_sq"] = torch.zeros_like(p)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            beta1, beta2 = group["betas"]
            state["step"] += 1
            exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
            denom = exp_avg_sq.sqrt().add_(group["eps"])
            step_size = group["lr"]
            if group["correct_bias"]:
                bias_correction1 = 1.0 - beta1 ** state["step"]
                bias_correction2 = 1.0 - beta2 ** state["step"]
                step_size = step_size * math.sqrt(bias_correction2) / bias_correction1
            p.addcdiv_(exp_avg, denom, value=-step_size)
            if group["weight_decay"] > 0.0 and not self._l2():
                p.add_(p, alpha=-group["lr"] * group["weight_decay"])


class Adam(AdamW):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _l2(self):
        return self.group["weight_decay"]
