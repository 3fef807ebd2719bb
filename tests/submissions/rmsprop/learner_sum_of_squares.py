# expect: failed pitfall=no-one-minus-alpha
"""The mean square written as a leaky sum, s = alpha * s + g^2: the (1 - alpha) is missing."""

import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps, self.wd = lr, alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.s, self.m, self.buf = {}, {}, {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for k, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad.add(p, alpha=self.wd)
            s = self.s.get(k, torch.zeros_like(p)) * self.alpha + g * g
            self.s[k] = s
            if self.centered:
                m = self.m.get(k, torch.zeros_like(p)) * self.alpha + (1 - self.alpha) * g
                self.m[k] = m
                s = s - m * m
            step = g / (s.sqrt() + self.eps)
            if self.momentum:
                step = self.buf[k] = self.buf.get(k, torch.zeros_like(p)) * self.momentum + step
            p.sub_(self.lr * step)
