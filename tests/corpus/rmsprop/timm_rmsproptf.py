# expect: failed pitfall=eps-inside-sqrt+mean-square-starts-at-one
# source: look-alike of timm's RMSpropTF with its defaults for the TF behaviour (square_avg starts at ones, eps inside the root, lr_in_momentum=True, TF order of ops s += (1 - alpha) * (g^2 - s)); written for this project, argument defaults adapted to the stub
import torch
from torch.optim import Optimizer


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 lr_in_momentum=True):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, lr_in_momentum=lr_in_momentum))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            keep = 1.0 - group["alpha"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if group["weight_decay"]:
                    grad = grad + group["weight_decay"] * p
                state = self.state[p]
                if not state:
                    state["sq"] = torch.ones_like(p)
                    state["mean"] = torch.zeros_like(p)
                    state["buf"] = torch.zeros_like(p)
                state["sq"].add_((grad * grad - state["sq"]) * keep)
                inner = state["sq"]
                if group["centered"]:
                    state["mean"].add_((grad - state["mean"]) * keep)
                    inner = inner - state["mean"] ** 2
                avg = (inner + group["eps"]).sqrt()
                if group["momentum"] > 0:
                    buf = state["buf"].mul_(group["momentum"])
                    if group["lr_in_momentum"]:
                        buf.add_(group["lr"] * grad / avg)
                        p.sub_(buf)
                    else:
                        buf.add_(grad / avg)
                        p.sub_(group["lr"] * buf)
                else:
                    p.sub_(group["lr"] * grad / avg)
        return None
