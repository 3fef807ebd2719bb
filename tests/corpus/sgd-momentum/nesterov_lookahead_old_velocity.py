# expect: failed pitfall=nesterov-ignored
# source: Nesterov's look-ahead taken with the velocity from before this step's update, g + mu * buf_old, which is plain momentum in disguise
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.mu, self.damp, self.wd, self.nesterov = lr, momentum, dampening, weight_decay, nesterov
        self.buf = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad + self.wd * p if self.wd else p.grad
            if not self.mu:
                p.sub_(self.lr * g)
                continue
            old = self.buf.get(id(p))
            if self.nesterov:
                direction = g if old is None else g + self.mu * old
            new = g.clone() if old is None else self.mu * old + (1 - self.damp) * g
            self.buf[id(p)] = new
            if not self.nesterov:
                direction = new
            p.sub_(self.lr * direction)
