"""Adam and AdamW. Run `grind run adam` to check your answer."""

import torch


class _Base:
    DECOUPLED = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.wd = lr, betas, eps, weight_decay
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        b1, b2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            st = self.state.setdefault(id(p), {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)})
            st["t"] += 1
            t = st["t"]
            if self.wd:
                if self.DECOUPLED:
                    p.mul_(1 - self.lr * self.wd)
                else:
                    g = g + self.wd * p
            st["m"].mul_(b1).add_(g, alpha=1 - b1)
            st["v"].mul_(b2).addcmul_(g, g, value=1 - b2)
            mhat, vhat = st["m"], st["v"]
            p.sub_(self.lr * mhat / (vhat.sqrt() + self.eps))


class Adam(_Base):
    pass


class AdamW(_Base):
    DECOUPLED = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
