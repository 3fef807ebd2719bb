# expect: failed pitfall=dampening-ignored
# source: the constructor accepts dampening and stores it, the update never reads it
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                             nesterov=nesterov)
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        lr, mom = self.defaults["lr"], self.defaults["momentum"]
        for p in self.params:
            if p.grad is None:
                continue
            d_p = p.grad
            if self.defaults["weight_decay"]:
                d_p = d_p.add(p, alpha=self.defaults["weight_decay"])
            if mom:
                if p not in self.state:
                    self.state[p] = d_p.detach().clone()
                else:
                    self.state[p].mul_(mom).add_(d_p)
                buf = self.state[p]
                d_p = d_p.add(buf, alpha=mom) if self.defaults["nesterov"] else buf
            p.add_(d_p, alpha=-lr)
