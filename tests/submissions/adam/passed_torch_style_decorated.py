# expect: passed
# Not a trick: a correct Adam written the way torch writes its optimizers, on
# torch.optim.Optimizer (param_groups, self.state, defaults) with step decorated by torch's own
# _use_grad_for_differentiable, whose wrapper code every torch optimizer's step shares.
import torch
from torch.optim.optimizer import Optimizer, _use_grad_for_differentiable


class Adam(Optimizer):
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      differentiable=False))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                if wd and self.decoupled:
                    p.mul_(1 - lr * wd)
                elif wd:
                    grad = grad.add(p, alpha=wd)
                state["step"] += 1
                t = state["step"]
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m.mul_(beta1).add_(grad, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = (v / (1 - beta2 ** t)).sqrt_().add_(eps)
                p.addcdiv_(m, denom, value=-lr / (1 - beta1 ** t))
        return None


class AdamW(Adam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

