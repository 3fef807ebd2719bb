# expect: passed
"""Vectorised over parameters with torch._foreach_* ops; state in parallel lists."""

import torch


class Adam:
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, (self.b1, self.b2), self.eps, self.wd = lr, betas, eps, weight_decay
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = [0] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            if p.grad is not None:
                p.grad.detach_()
                p.grad.zero_()

    @torch.no_grad()
    def step(self):
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        ps = [self.params[i] for i in live]
        gs = [self.params[i].grad for i in live]
        ms = [self.m[i] for i in live]
        vs = [self.v[i] for i in live]
        for i in live:
            self.t[i] += 1
        ts = [self.t[i] for i in live]
        if self.wd and self.decoupled:
            torch._foreach_mul_(ps, 1 - self.lr * self.wd)
        elif self.wd:
            gs = torch._foreach_add(gs, ps, alpha=self.wd)
        torch._foreach_lerp_(ms, gs, 1 - self.b1)
        torch._foreach_mul_(vs, self.b2)
        torch._foreach_addcmul_(vs, gs, gs, value=1 - self.b2)
        denom = torch._foreach_sqrt(vs)
        torch._foreach_div_(denom, [(1 - self.b2 ** t) ** 0.5 for t in ts])
        torch._foreach_add_(denom, self.eps)
        torch._foreach_addcdiv_(ps, ms, denom, [-self.lr / (1 - self.b1 ** t) for t in ts])


class AdamW(Adam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
