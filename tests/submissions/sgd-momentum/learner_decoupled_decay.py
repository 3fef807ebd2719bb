# expect: failed pitfall=decay-after-momentum
"""AdamW habits: the weights are shrunk directly, p *= 1 - lr * wd, and the velocity only ever
sees the raw gradient. With SGD that is the same as adding wd * p after the velocity."""

import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.hp = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                       nesterov=nesterov)
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        lr, mu, damp = self.hp["lr"], self.hp["momentum"], self.hp["dampening"]
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            p.mul_(1 - lr * self.hp["weight_decay"])
            if mu:
                if p not in self.state:
                    self.state[p] = g.clone()
                else:
                    self.state[p].mul_(mu).add_(g, alpha=1 - damp)
                buf = self.state[p]
                g = g + mu * buf if self.hp["nesterov"] else buf
            p.sub_(lr * g)
