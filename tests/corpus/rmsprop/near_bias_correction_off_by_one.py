# expect: failed
# source: near miss, no known mistake: an Adam habit with a step counter read before it is incremented, so the mean square is divided by 1 - alpha**(t + 1) (close to Adam's bias correction, never equal to it)
import math
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps, self.wd = lr, alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.t = {}
        self.st = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad + self.wd * p
            s = self.st.setdefault(p, {"v": torch.zeros_like(p), "m": torch.zeros_like(p), "b": torch.zeros_like(p)})
            step = self.t.get(p, 0)
            s["v"] = self.alpha * s["v"] + (1 - self.alpha) * g * g
            var = s["v"]
            if self.centered:
                s["m"] = self.alpha * s["m"] + (1 - self.alpha) * g
                var = var - s["m"] * s["m"]
            corrected = var / (1 - math.pow(self.alpha, step + 2))
            self.t[p] = step + 1
            upd = g / (corrected.sqrt() + self.eps)
            if self.momentum > 0:
                s["b"] = self.momentum * s["b"] + upd
                upd = s["b"]
            p -= self.lr * upd
