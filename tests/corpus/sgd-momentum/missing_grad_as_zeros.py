# expect: failed pitfall=none-grad-as-zero
# source: "no gradient means a zero gradient": p.grad replaced by zeros so that every parameter takes part in every step
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.buf = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            g = g + self.weight_decay * p
            if self.momentum:
                if self.buf[i] is None:
                    self.buf[i] = g.clone()
                else:
                    self.buf[i].mul_(self.momentum).add_(g, alpha=1 - self.dampening)
                g = g + self.momentum * self.buf[i] if self.nesterov else self.buf[i]
            p.sub_(self.lr * g)
