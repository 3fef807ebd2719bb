# expect: failed pitfall=momentum-on-gradient
"""Heavy-ball habits from SGD: the velocity collects the raw gradient, and the RMS
normalisation is applied to the velocity when stepping."""

import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps = lr, alpha, eps
        self.weight_decay, self.momentum, self.centered = weight_decay, momentum, centered
        self.sq = [torch.zeros_like(p) for p in self.params]
        self.avg = [torch.zeros_like(p) for p in self.params]
        self.velocity = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with torch.no_grad():
            for p, sq, avg, v in zip(self.params, self.sq, self.avg, self.velocity):
                if p.grad is None:
                    continue
                g = p.grad if self.weight_decay == 0 else p.grad + self.weight_decay * p
                sq.copy_(self.alpha * sq + (1 - self.alpha) * g * g)
                denom_sq = sq
                if self.centered:
                    avg.copy_(self.alpha * avg + (1 - self.alpha) * g)
                    denom_sq = sq - avg * avg
                v.copy_(self.momentum * v + g)
                p.copy_(p - self.lr * v / (denom_sq.sqrt() + self.eps))
