# expect: failed pitfall=alpha-swapped
# source: alpha read as "how much of the new squared gradient to take" (a smoothing weight), so the mean square is (1 - alpha) * s + alpha * g^2
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps, self.wd = lr, alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.s, self.m, self.b = {}, {}, {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        a = self.alpha
        for k, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad + self.wd * p
            self.s[k] = (1 - a) * self.s.get(k, torch.zeros_like(p)) + a * g * g
            var = self.s[k]
            if self.centered:
                self.m[k] = a * self.m.get(k, torch.zeros_like(p)) + (1 - a) * g
                var = var - self.m[k] ** 2
            d = g / (var.sqrt() + self.eps)
            if self.momentum > 0:
                self.b[k] = self.momentum * self.b.get(k, torch.zeros_like(p)) + d
                d = self.b[k]
            p -= self.lr * d
