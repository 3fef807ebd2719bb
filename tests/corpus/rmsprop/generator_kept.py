# expect: failed pitfall=params-generator-consumed
# source: params stored as passed in; model.parameters() is a generator, so the first loop over it (zero_grad) exhausts it
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = params
        self.lr, self.alpha, self.eps, self.wd = lr, alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            s = self.state.setdefault(p, [torch.zeros_like(p) for _ in range(3)])
            g = p.grad + self.wd * p
            s[0].mul_(self.alpha).addcmul_(g, g, value=1 - self.alpha)
            var = s[0]
            if self.centered:
                s[1].mul_(self.alpha).add_(g, alpha=1 - self.alpha)
                var = var - s[1] * s[1]
            d = g / (var.sqrt() + self.eps)
            if self.momentum > 0:
                s[2].mul_(self.momentum).add_(d)
                d = s[2]
            p.sub_(self.lr * d)
