# expect: failed pitfall=dampening-ignored+nesterov-ignored
# source: a minimal momentum SGD that takes dampening and nesterov to match the signature and uses neither
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay
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
            if self.momentum:
                v = self.velocity.get(p)
                self.velocity[p] = g.clone() if v is None else self.momentum * v + g
                g = self.velocity[p]
            p.sub_(self.lr * g)
