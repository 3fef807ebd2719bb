# expect: failed pitfall=step-from-zero-raises
import math

import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
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
            st = self.state.setdefault(p, {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)})
            g = p.grad + self.weight_decay * p
            st["m"] = b1 * st["m"] + (1 - b1) * g
            st["v"] = b2 * st["v"] + (1 - b2) * g * g
            step_size = self.lr * math.sqrt(1 - b2 ** st["t"]) / (1 - b1 ** st["t"])
            p -= step_size * st["m"] / (st["v"].sqrt() + self.eps)
            st["t"] += 1


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, 0.0)
        self.decoupled = weight_decay

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is not None:
                p *= 1 - self.lr * self.decoupled
        super().step()
