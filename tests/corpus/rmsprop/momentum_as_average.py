# expect: failed pitfall=momentum-ema
# source: the velocity written like Adam's first moment, an exponential average with weight (1 - momentum) on the new normalised step
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps, self.wd = lr, alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.sq, self.gm, self.vel = {}, {}, {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for k, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad + self.wd * p
            sq = self.sq.setdefault(k, torch.zeros_like(p))
            sq.lerp_(g * g, 1 - self.alpha)
            var = sq
            if self.centered:
                gm = self.gm.setdefault(k, torch.zeros_like(p))
                gm.lerp_(g, 1 - self.alpha)
                var = sq - gm.square()
            normalised = g / (var.sqrt() + self.eps)
            if self.momentum > 0:
                v = self.vel.setdefault(k, torch.zeros_like(p))
                v.lerp_(normalised, 1 - self.momentum)
                normalised = v
            p.sub_(self.lr * normalised)
