# expect: passed
"""Written differently: state in a list indexed like the parameters, updates through .data with
out-of-place arithmetic, zero_grad that fills zeros, and Nesterov expanded algebraically as
(1 + mu) * g + mu**2 * old_buf, which is g + mu * new_buf without dampening."""

import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = [p for p in params]
        self.lr = lr
        self.mu = momentum
        self.damp = dampening
        self.wd = weight_decay
        self.nesterov = nesterov
        self.velocity = [None for _ in self.params]

    def zero_grad(self):
        for p in self.params:
            if p.grad is not None:
                p.grad.detach_()
                p.grad.zero_()

    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad.data + self.wd * p.data
            if self.mu == 0:
                p.data = p.data - self.lr * g
                continue
            old = self.velocity[i]
            if old is None:
                new = g.clone()
                direction = g + self.mu * new if self.nesterov else new
            else:
                new = self.mu * old + (1 - self.damp) * g
                direction = (1 + self.mu) * g + self.mu ** 2 * old if self.nesterov else new
            self.velocity[i] = new
            p.data = p.data - self.lr * direction
