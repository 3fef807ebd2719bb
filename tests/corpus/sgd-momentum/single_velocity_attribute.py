# expect: failed pitfall=shared-buffer
# source: one self.velocity for the optimizer, as in a single-tensor tutorial, reused for every parameter
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.velocity = None

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with torch.no_grad():
            for p in self.params:
                if p.grad is None:
                    continue
                g = p.grad + self.weight_decay * p
                if self.momentum:
                    if self.velocity is None:
                        self.velocity = g.clone()
                    else:
                        self.velocity = self.momentum * self.velocity + (1 - self.dampening) * g
                    g = g + self.momentum * self.velocity if self.nesterov else self.velocity
                p.sub_(self.lr * g)
