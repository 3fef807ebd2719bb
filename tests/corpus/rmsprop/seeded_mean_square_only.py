# expect: failed
# source: independent mistake: the mean square seeded with the first squared gradient ("no cold start"), while the centered mean of gradients still starts at zero: the warm start made on one average only. A near miss of averages-start-at-first-gradient, which seeds the centered mean too: on centered inputs that pitfall predicts other numbers, so it must not be named
import torch
from torch.optim import Optimizer


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            a = group["alpha"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.add(p, alpha=group["weight_decay"]) if group["weight_decay"] else p.grad
                st = self.state[p]
                if not st:
                    st["sq"] = grad.square()
                    st["avg"] = torch.zeros_like(p)
                    st["mom"] = torch.zeros_like(p)
                else:
                    st["sq"].mul_(a).addcmul_(grad, grad, value=1 - a)
                var = st["sq"]
                if group["centered"]:
                    st["avg"].mul_(a).add_(grad, alpha=1 - a)
                    var = var.addcmul(st["avg"], st["avg"], value=-1)
                denom = var.sqrt().add_(group["eps"])
                if group["momentum"] > 0:
                    st["mom"].mul_(group["momentum"]).addcdiv_(grad, denom)
                    p.add_(st["mom"], alpha=-group["lr"])
                else:
                    p.addcdiv_(grad, denom, value=-group["lr"])
