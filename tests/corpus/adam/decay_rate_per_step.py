# expect: failed pitfall=decay-without-lr
# source: AdamW's decay written as a fixed fraction per step, p *= 1 - weight_decay (labml's WeightDecay(absolute=True) semantics)
import math

import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.st = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def apply_decay(self, p, g):
        return g + self.weight_decay * p if self.weight_decay else g

    def step(self):
        b1, b2 = self.betas
        with torch.no_grad():
            for p in self.params:
                if p.grad is None:
                    continue
                if p not in self.st:
                    self.st[p] = [0, torch.zeros_like(p), torch.zeros_like(p)]
                s = self.st[p]
                s[0] += 1
                g = self.apply_decay(p, p.grad)
                s[1] = b1 * s[1] + (1 - b1) * g
                s[2] = b2 * s[2] + (1 - b2) * g * g
                denom = s[2].sqrt() / math.sqrt(1 - b2 ** s[0]) + self.eps
                p -= (self.lr / (1 - b1 ** s[0])) * s[1] / denom


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def apply_decay(self, p, g):
        p.mul_(1 - self.weight_decay)
        return g
