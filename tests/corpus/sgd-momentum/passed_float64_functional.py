# expect: passed
# source: functional update with the velocity kept in float64 (master copy), parameters written back in their own dtype
import torch


def sgd_update(p, g, buf, *, lr, momentum, dampening, weight_decay, nesterov):
    """Returns (new parameter, new velocity or None), all in float64."""
    d = g + weight_decay * p
    if momentum == 0:
        return p - lr * d, None
    buf = d.clone() if buf is None else momentum * buf + (1 - dampening) * d
    direction = d + momentum * buf if nesterov else buf
    return p - lr * direction, buf


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = [p for p in params]
        self.hyper = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
        self.buffers = {}

    def zero_grad(self):
        for p in self.params:
            if p.grad is not None:
                p.grad = None

    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            w = p.detach().double()
            g = p.grad.detach().double()
            new, buf = sgd_update(w, g, self.buffers.get(id(p)), **self.hyper)
            if buf is not None:
                self.buffers[id(p)] = buf
            with torch.no_grad():
                p.copy_(new)
