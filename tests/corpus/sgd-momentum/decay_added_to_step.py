# expect: failed pitfall=decay-after-momentum
# source: weight decay added to the final step direction (buf + wd * p) instead of to the gradient
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

    def _direction(self, p, g):
        if not self.momentum:
            return g
        v = self.velocity.get(id(p))
        v = g.clone() if v is None else self.momentum * v + (1 - self.dampening) * g
        self.velocity[id(p)] = v
        return g + self.momentum * v if self.nesterov else v

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is not None:
                p -= self.lr * (self._direction(p, p.grad) + self.weight_decay * p)
