# expect: failed pitfall=zero-grad-on-none
# source: zero_grad written as p.grad.zero_() on every parameter, without the None check torch has
import torch


class Adam:
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.b1, self.b2, self.eps, self.wd = lr, betas[0], betas[1], eps, weight_decay
        self.m, self.v, self.t = {}, {}, {}

    def zero_grad(self):
        for p in self.params:
            p.grad.detach_()
            p.grad.zero_()

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            key = id(p)
            self.t[key] = self.t.get(key, 0) + 1
            m = self.m.setdefault(key, torch.zeros_like(p))
            v = self.v.setdefault(key, torch.zeros_like(p))
            g = p.grad
            if self.wd and self.decoupled:
                p.mul_(1 - self.lr * self.wd)
            elif self.wd:
                g = g + self.wd * p
            m.mul_(self.b1).add_(g, alpha=1 - self.b1)
            v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
            t = self.t[key]
            p.sub_(self.lr * (m / (1 - self.b1 ** t)) / ((v / (1 - self.b2 ** t)).sqrt() + self.eps))


class AdamW(Adam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
