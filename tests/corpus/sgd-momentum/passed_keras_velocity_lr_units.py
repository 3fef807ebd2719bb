# expect: passed
# source: Keras/Sutskever formulation, velocity in lr units (v = mu * v - lr * g; p += v; Nesterov p += mu * v - lr * g), with torch's dampening rule added; equal to torch at a constant lr
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.velocity = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p
            if self.momentum == 0:
                p.add_(-self.lr * g)
                continue
            v = self.velocity.get(p)
            if v is None:
                v = -self.lr * g
            else:
                v = self.momentum * v - self.lr * (1 - self.dampening) * g
            self.velocity[p] = v
            if self.nesterov:
                p.add_(self.momentum * v - self.lr * g)
            else:
                p.add_(v)
