# expect: passed
"""Subclasses torch.optim.Optimizer; keeps m, v and the step count as float32 tensors
whatever the parameters' dtype, and does the bias correction in float32 tensor math."""

import torch
from torch.optim import Optimizer


class _AdamBase(Optimizer):
    def __init__(self, params, lr, betas, eps, weight_decay, decoupled):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      decoupled=decoupled))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, wd = group["lr"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = torch.tensor(0.0)
                    st["m"] = torch.zeros(p.shape)  # float32
                    st["v"] = torch.zeros(p.shape)
                st["step"] += 1
                g = p.grad.float()
                if wd and group["decoupled"]:
                    p.mul_(1 - lr * wd)
                elif wd:
                    g = g + wd * p.float()
                st["m"].lerp_(g, 1 - beta1)
                st["v"].mul_(beta2).add_((1 - beta2) * g * g)
                bc1 = 1 - torch.tensor(beta1) ** st["step"]
                bc2 = 1 - torch.tensor(beta2) ** st["step"]
                update = (st["m"] / bc1) / ((st["v"] / bc2).sqrt() + group["eps"])
                p.sub_(lr * update.to(p.dtype))


class Adam(_AdamBase):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr, betas, eps, weight_decay, decoupled=False)


class AdamW(_AdamBase):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay, decoupled=True)
