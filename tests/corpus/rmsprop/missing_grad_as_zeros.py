# expect: failed pitfall=none-grad-as-zero
# source: "no gradient means a zero gradient": a None .grad replaced by zeros, so the averages decay and the velocity keeps moving the parameter
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps, self.wd = lr, alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.sq = [torch.zeros_like(p) for p in self.params]
        self.mean = [torch.zeros_like(p) for p in self.params]
        self.buf = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            g = g + self.wd * p
            self.sq[i] = self.alpha * self.sq[i] + (1 - self.alpha) * g * g
            var = self.sq[i]
            if self.centered:
                self.mean[i] = self.alpha * self.mean[i] + (1 - self.alpha) * g
                var = var - self.mean[i] ** 2
            d = g / (var.sqrt() + self.eps)
            if self.momentum > 0:
                self.buf[i] = self.momentum * self.buf[i] + d
                d = self.buf[i]
            p -= self.lr * d
