# expect: failed pitfall=no-bias-correction
import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.wd = lr, betas, eps, weight_decay
        self.m = {}
        self.v = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _grad(self, p):
        return p.grad + self.wd * p if self.wd else p.grad

    def step(self):
        b1, b2 = self.betas
        with torch.no_grad():
            for p in self.params:
                if p.grad is None:
                    continue
                g = self._grad(p)
                k = id(p)
                self.m[k] = b1 * self.m.get(k, torch.zeros_like(p)) + (1 - b1) * g
                self.v[k] = b2 * self.v.get(k, torch.zeros_like(p)) + (1 - b2) * g ** 2
                p -= self.lr * self.m[k] / (torch.sqrt(self.v[k]) + self.eps)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _grad(self, p):
        p.mul_(1 - self.lr * self.wd)
        return p.grad
