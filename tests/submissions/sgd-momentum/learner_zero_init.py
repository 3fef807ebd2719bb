# expect: failed pitfall=zero-initialised-buffer
"""The textbook velocity: every buffer allocated as zeros up front, then the same damped update on
every step, the first one included."""

import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.bufs = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p, buf in zip(self.params, self.bufs):
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p
            if self.momentum:
                buf.mul_(self.momentum).add_((1 - self.dampening) * g)
                g = g + self.momentum * buf if self.nesterov else buf
            p -= self.lr * g
