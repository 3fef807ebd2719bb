# expect: failed pitfall=no-square-root
# source: "divide by the mean of the squared gradients" taken literally: no square root on the denominator
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps, self.wd = lr, alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad + self.wd * p
            st = self.state.setdefault(p, {"ms": torch.zeros_like(p), "mg": torch.zeros_like(p),
                                           "v": torch.zeros_like(p)})
            st["ms"] = self.alpha * st["ms"] + (1 - self.alpha) * g * g
            var = st["ms"]
            if self.centered:
                st["mg"] = self.alpha * st["mg"] + (1 - self.alpha) * g
                var = var - st["mg"] * st["mg"]
            d = g / (var + self.eps)
            if self.momentum > 0:
                st["v"] = self.momentum * st["v"] + d
                d = st["v"]
            p -= self.lr * d
