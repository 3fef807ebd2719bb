# expect: failed pitfall=dampening-without-momentum
# source: the velocity branch runs whatever the momentum, so with momentum 0 a dampening still scales every later gradient
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.buffers = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p
            if self.buffers[i] is None:
                self.buffers[i] = g.clone()
            else:
                self.buffers[i] = self.momentum * self.buffers[i] + (1 - self.dampening) * g
            buf = self.buffers[i]
            p.sub_(self.lr * (g + self.momentum * buf if self.nesterov else buf))
