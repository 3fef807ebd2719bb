# expect: passed
"""Written the way torch writes its optimizers: a torch.optim.Optimizer subclass with
param_groups, self.state keyed by the tensor, in-place ops (lerp_ for the mean gradient,
addcdiv_ for the step), and the centered variance through addcmul with value=-1."""

import torch
from torch.optim import Optimizer


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                        centered=centered)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if group["weight_decay"] != 0:
                    grad = grad.add(p, alpha=group["weight_decay"])
                state = self.state[p]
                if len(state) == 0:
                    state["square_avg"] = torch.zeros_like(p)
                    if group["centered"]:
                        state["grad_avg"] = torch.zeros_like(p)
                    if group["momentum"] > 0:
                        state["momentum_buffer"] = torch.zeros_like(p)
                alpha = group["alpha"]
                sq = state["square_avg"]
                sq.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if group["centered"]:
                    ga = state["grad_avg"]
                    ga.lerp_(grad, 1 - alpha)
                    avg = sq.addcmul(ga, ga, value=-1).sqrt_().add_(group["eps"])
                else:
                    avg = sq.sqrt().add_(group["eps"])
                if group["momentum"] > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(group["momentum"]).addcdiv_(grad, avg)
                    p.add_(buf, alpha=-group["lr"])
                else:
                    p.addcdiv_(grad, avg, value=-group["lr"])
        return None
