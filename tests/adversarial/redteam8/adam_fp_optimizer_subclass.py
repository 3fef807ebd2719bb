# false-positive probe (redteam8): adam, a correct answer in a common interview style: Adam and AdamW
# as subclasses of torch.optim.Optimizer (allowed: only Adam/AdamW and their functions are listed),
# written from memory with plain tensor ops. Expected: PASSED at every level. Observed (2026-12-03):
# practice PASSED, poison alone PASSED, full marks PASSED. No false positive.
import torch


class Adam(torch.optim.Optimizer):
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                state = self.state[p]
                if not state:
                    state["t"], state["m"], state["v"] = 0, torch.zeros_like(p), torch.zeros_like(p)
                if group["weight_decay"]:
                    if self.decoupled:
                        p.mul_(1 - group["lr"] * group["weight_decay"])
                    else:
                        g = g + group["weight_decay"] * p
                state["t"] += 1
                t, m, v = state["t"], state["m"], state["v"]
                m.mul_(beta1).add_(g, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                m_hat = m / (1 - beta1 ** t)
                v_hat = v / (1 - beta2 ** t)
                p.sub_(group["lr"] * m_hat / (v_hat.sqrt() + group["eps"]))


class AdamW(Adam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
