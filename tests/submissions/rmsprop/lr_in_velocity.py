# expect: passed
"""Written differently: state in parallel lists, out-of-place arithmetic through .data, a
zero_grad that fills zeros, the variance written as E[g^2] - E[g]^2 with pow, and the learning
rate folded into the velocity (vel = momentum * vel + lr * g / denom; p -= vel), which equals
torch's lr * buf as long as lr does not change."""

import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = [p for p in params]
        self.lr, self.rho, self.eps = lr, alpha, eps
        self.wd, self.mu, self.centered = weight_decay, momentum, centered
        self.ms = [None for _ in self.params]
        self.mg = [None for _ in self.params]
        self.vel = [None for _ in self.params]

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
            if self.ms[i] is None:
                self.ms[i] = torch.zeros_like(p.data)
                self.mg[i] = torch.zeros_like(p.data)
                self.vel[i] = torch.zeros_like(p.data)
            self.ms[i] = self.rho * self.ms[i] + (1 - self.rho) * g.pow(2)
            second = self.ms[i]
            if self.centered:
                self.mg[i] = self.rho * self.mg[i] + (1 - self.rho) * g
                second = second - self.mg[i].pow(2)
            update = self.lr * g / (torch.sqrt(second) + self.eps)
            if self.mu > 0:
                self.vel[i] = self.mu * self.vel[i] + update
                update = self.vel[i]
            p.data = p.data - update
