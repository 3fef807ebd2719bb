# expect: failed pitfall=decay-ignored
# source: weight_decay in the signature (copied from torch's docs) and never used
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.dampening, self.nesterov = lr, momentum, dampening, nesterov
        self.bufs = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            if self.momentum:
                if p in self.bufs:
                    self.bufs[p] = self.momentum * self.bufs[p] + (1 - self.dampening) * g
                else:
                    self.bufs[p] = g.clone()
                g = g + self.momentum * self.bufs[p] if self.nesterov else self.bufs[p]
            p -= self.lr * g
