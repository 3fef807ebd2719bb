# expect: failed pitfall=nesterov-velocity-twice
# source: the plain-momentum line overwrites d_p before the Nesterov branch adds momentum * buf to it
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.momentum_buffer = [None for _ in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            d_p = p.grad
            if self.weight_decay != 0:
                d_p = d_p.add(p, alpha=self.weight_decay)
            if self.momentum != 0:
                buf = self.momentum_buffer[i]
                if buf is None:
                    buf = self.momentum_buffer[i] = torch.clone(d_p).detach()
                else:
                    buf.mul_(self.momentum).add_(d_p, alpha=1 - self.dampening)
                d_p = buf
                if self.nesterov:
                    d_p = d_p.add(buf, alpha=self.momentum)
            p.add_(d_p, alpha=-self.lr)
