# expect: failed pitfall=zero-initialised-buffer
# source: buffers allocated as zeros up front and the damped update applied from the first step
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.v = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p, v in zip(self.params, self.v):
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p
            if self.momentum:
                v.mul_(self.momentum).add_((1 - self.dampening) * g)
                g = g + self.momentum * v if self.nesterov else v
            p.sub_(self.lr * g)
