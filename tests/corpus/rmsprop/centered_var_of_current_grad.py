# expect: failed pitfall=centered-minus-grad-squared
# source: "variance = E[g^2] - (E[g])^2" remembered without the second running average: the mean square minus this step's g^2
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.cfg = (lr, alpha, eps, weight_decay, momentum, centered)
        self.sq = {}
        self.vel = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        lr, alpha, eps, wd, mom, centered = self.cfg
        for p in self.params:
            if p.grad is None:
                continue
            g = torch.add(p.grad, p, alpha=wd)
            s = self.sq[p] = alpha * self.sq.get(p, torch.zeros_like(p)) + (1 - alpha) * g ** 2
            if centered:
                s = s - g ** 2
            upd = g / (s.sqrt() + eps)
            if mom > 0:
                upd = self.vel[p] = mom * self.vel.get(p, torch.zeros_like(p)) + upd
            p.add_(upd, alpha=-lr)
