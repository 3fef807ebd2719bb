# expect: passed
# source: a NumPy-first learner: the state lives in numpy arrays of the parameter's dtype, the arithmetic is done in numpy and copied back into the tensor
import numpy as np
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps = lr, alpha, eps
        self.wd, self.momentum, self.centered = weight_decay, momentum, centered
        self.cache = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for idx, p in enumerate(self.params):
            if p.grad is None:
                continue
            w = p.detach().numpy().copy()
            g = p.grad.detach().numpy() + self.wd * w
            if idx not in self.cache:
                self.cache[idx] = {"ms": np.zeros_like(w), "mg": np.zeros_like(w), "v": np.zeros_like(w)}
            c = self.cache[idx]
            c["ms"] = self.alpha * c["ms"] + (1 - self.alpha) * np.square(g)
            var = c["ms"]
            if self.centered:
                c["mg"] = self.alpha * c["mg"] + (1 - self.alpha) * g
                var = var - np.square(c["mg"])
            direction = g / (np.sqrt(var) + self.eps)
            if self.momentum > 0:
                c["v"] = self.momentum * c["v"] + direction
                direction = c["v"]
            with torch.no_grad():
                p.copy_(torch.from_numpy(np.asarray(w - self.lr * direction, dtype=w.dtype)))
