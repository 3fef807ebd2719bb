# expect: failed pitfall=zero-grad-on-none
# source: zero_grad as p.grad.data.zero_() on every parameter, which fails before the first backward()
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.momentum_buffers = {}

    def zero_grad(self):
        for p in self.params:
            p.grad.data.zero_()

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad.add(p, alpha=self.weight_decay)
            if self.momentum != 0:
                buf = self.momentum_buffers.get(p)
                if buf is None:
                    buf = self.momentum_buffers[p] = g.clone()
                else:
                    buf.mul_(self.momentum).add_(g, alpha=1 - self.dampening)
                g = g.add(buf, alpha=self.momentum) if self.nesterov else buf
            p.add_(g, alpha=-self.lr)
