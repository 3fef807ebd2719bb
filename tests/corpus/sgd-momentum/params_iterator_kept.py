# expect: failed pitfall=params-generator-consumed
# source: params stored as given; the velocity table is built by iterating it in __init__, so later loops see nothing
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = params
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.velocity = {id(p): None for p in params}

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
                v = self.velocity[id(p)]
                v = g.clone() if v is None else self.momentum * v + (1 - self.dampening) * g
                self.velocity[id(p)] = v
                g = g + self.momentum * v if self.nesterov else v
            p.sub_(self.lr * g)
