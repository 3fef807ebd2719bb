# expect: passed
# source: look-alike of timm.optim.AdamW (AdamWLegacy): PyTorch 1.6's AdamW rewritten with .data and lerp; same numbers as torch
import math

import torch


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        self.param_list = list(params)
        self.defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}
        self.state = {}

    def zero_grad(self):
        for p in self.param_list:
            p.grad = None

    def _l2(self):
        return False

    def step(self):
        lr, (beta1, beta2) = self.defaults["lr"], self.defaults["betas"]
        eps, wd = self.defaults["eps"], self.defaults["weight_decay"]
        for p in self.param_list:
            if p.grad is None:
                continue
            grad = p.grad.data
            if self._l2():
                grad = grad.add(p.data, alpha=wd)
            else:
                p.data.mul_(1 - lr * wd)
            state = self.state.setdefault(id(p), {})
            if len(state) == 0:
                state["step"] = 0
                state["exp_avg"] = torch.zeros_like(p.data)
                state["exp_avg_sq"] = torch.zeros_like(p.data)
            state["step"] += 1
            state["exp_avg"].lerp_(grad, 1 - beta1)
            state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1 ** state["step"]
            bias_correction2 = 1 - beta2 ** state["step"]
            denom = (state["exp_avg_sq"].sqrt() / math.sqrt(bias_correction2)).add_(eps)
            p.data.addcdiv_(state["exp_avg"], denom, value=-lr / bias_correction1)


class Adam(AdamW):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _l2(self):
        return True
