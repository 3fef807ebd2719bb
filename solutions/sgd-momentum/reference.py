"""Reference: SGD with momentum, dampening, Nesterov and weight decay, matching torch.optim.SGD."""

import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)  # model.parameters() is a generator: read it once, here
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        # One velocity per parameter, created the first time that parameter has a gradient.
        self.buffers = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None  # what torch does by default; None also means "skip me" in step()

    @torch.no_grad()  # parameters are leaves that require grad: update them outside autograd
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue  # no gradient: the parameter does not move and its velocity is left as it is
            g = p.grad
            if self.weight_decay:
                g = g + self.weight_decay * p  # L2 term joins the gradient, before the velocity sees it
            if self.momentum:
                buf = self.buffers[i]
                if buf is None:
                    # torch's convention: the first velocity is the gradient itself, undamped.
                    # clone(): the buffer must not share memory with p.grad, which the caller may zero.
                    buf = self.buffers[i] = g.clone()
                else:
                    buf.mul_(self.momentum).add_(g, alpha=1 - self.dampening)
                # Nesterov steps along the gradient plus one more momentum-scaled velocity
                # (the velocity already includes this step's gradient).
                g = g + self.momentum * buf if self.nesterov else buf
            p.sub_(self.lr * g)
