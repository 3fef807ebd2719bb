# expect: failed pitfall=counter-counts-skipped-steps
# source: Optimizer subclass keeping the step count in the param group (as some older optimizers did), so it ticks for parameters without a gradient
import torch
from torch.optim import Optimizer


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def _shrink(self, p, group):
        pass

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            group["step"] = group.get("step", 0) + 1
            t = group["step"]
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["m"] = torch.zeros_like(p)
                    st["v"] = torch.zeros_like(p)
                g = p.grad
                if type(self) is Adam and group["weight_decay"]:
                    g = g + group["weight_decay"] * p
                self._shrink(p, group)
                st["m"].mul_(b1).add_(g, alpha=1 - b1)
                st["v"].mul_(b2).addcmul_(g, g, value=1 - b2)
                m_hat = st["m"] / (1 - b1 ** t)
                v_hat = st["v"] / (1 - b2 ** t)
                p.sub_(group["lr"] * m_hat / (v_hat.sqrt() + group["eps"]))


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _shrink(self, p, group):
        p.mul_(1 - group["lr"] * group["weight_decay"])
