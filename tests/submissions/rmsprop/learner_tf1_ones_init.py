# expect: failed pitfall=mean-square-starts-at-one
"""Someone who learned RMSprop from TensorFlow 1: the mean square starts at ones (eps kept
outside the root here, so only the start differs from torch)."""

import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps = lr, alpha, eps
        self.weight_decay, self.momentum, self.centered = weight_decay, momentum, centered
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p
            if p not in self.state:
                self.state[p] = (torch.ones_like(p), torch.zeros_like(p), torch.zeros_like(p))
            ms, mg, mom = self.state[p]
            ms.mul_(self.alpha).add_((1 - self.alpha) * g * g)
            if self.centered:
                mg.mul_(self.alpha).add_((1 - self.alpha) * g)
                rms = (ms - mg * mg).sqrt()
            else:
                rms = ms.sqrt()
            if self.momentum > 0:
                mom.mul_(self.momentum).add_(g / (rms + self.eps))
                p.sub_(self.lr * mom)
            else:
                p.sub_(self.lr * g / (rms + self.eps))
