# expect: failed pitfall=decay-ignored+momentum-on-gradient
# source: a first attempt grown out of an SGD-with-momentum solution: the velocity collects raw gradients and is normalised afterwards, and weight_decay is accepted but never used
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps = lr, alpha, eps
        self.weight_decay, self.momentum, self.centered = weight_decay, momentum, centered
        self.velocity = {}
        self.square = {}
        self.mean = {}

    def zero_grad(self):
        for p in self.params:
            if p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            key = id(p)
            if key not in self.square:
                self.square[key] = torch.zeros_like(p)
                self.mean[key] = torch.zeros_like(p)
                self.velocity[key] = torch.zeros_like(p)
            self.square[key] = self.alpha * self.square[key] + (1 - self.alpha) * g * g
            var = self.square[key]
            if self.centered:
                self.mean[key] = self.alpha * self.mean[key] + (1 - self.alpha) * g
                var = var - self.mean[key] ** 2
            self.velocity[key] = self.momentum * self.velocity[key] + g
            p -= self.lr * self.velocity[key] / (var.sqrt() + self.eps)
