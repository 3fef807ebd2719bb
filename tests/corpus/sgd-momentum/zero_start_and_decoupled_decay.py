# expect: failed pitfall=decay-after-momentum+zero-initialised-buffer
# source: CS231n-style velocity started at zero and damped from the first step, with AdamW-habit decoupled decay
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.mu, self.damp, self.wd, self.nesterov = lr, momentum, dampening, weight_decay, nesterov
        self.v = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p, v in zip(self.params, self.v):
            if p.grad is None:
                continue
            if self.wd:
                p.mul_(1 - self.lr * self.wd)
            g = p.grad
            if self.mu:
                v.copy_(self.mu * v + (1 - self.damp) * g)
                g = g + self.mu * v if self.nesterov else v
            p.sub_(self.lr * g)
