# expect: failed pitfall=averages-start-at-first-gradient
# source: independent mistake: a hand-written "warm start" that seeds every running average with its first sample (square_avg = g*g, grad_avg = g) to avoid RMSprop's large first steps
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.group = list(params)
        self.hp = dict(lr=lr, alpha=alpha, eps=eps, wd=weight_decay, mom=momentum, centered=centered)
        self.ms, self.mg, self.buf = {}, {}, {}

    def zero_grad(self):
        for t in self.group:
            t.grad = None

    @torch.no_grad()
    def step(self):
        h = self.hp
        for t in self.group:
            if t.grad is None:
                continue
            g = t.grad + h["wd"] * t if h["wd"] else t.grad
            k = id(t)
            if k not in self.ms:
                self.ms[k] = g * g
                self.mg[k] = g.clone()
                self.buf[k] = torch.zeros_like(t)
            else:
                self.ms[k] = h["alpha"] * self.ms[k] + (1 - h["alpha"]) * g * g
                self.mg[k] = h["alpha"] * self.mg[k] + (1 - h["alpha"]) * g
            v = self.ms[k] - self.mg[k] ** 2 if h["centered"] else self.ms[k]
            d = g / (v.sqrt() + h["eps"])
            if h["mom"] > 0:
                self.buf[k] = h["mom"] * self.buf[k] + d
                d = self.buf[k]
            t.sub_(h["lr"] * d)
