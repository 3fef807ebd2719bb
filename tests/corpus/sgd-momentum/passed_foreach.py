# expect: passed
# source: vectorised over parameters with torch._foreach_* (like torch's multi-tensor path), buffers in a list aligned with the parameters
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.mu, self.damp, self.wd, self.nesterov = lr, momentum, dampening, weight_decay, nesterov
        self.bufs = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        idx = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not idx:
            return
        ps = [self.params[i] for i in idx]
        gs = [self.params[i].grad for i in idx]
        if self.wd:
            gs = torch._foreach_add(gs, ps, alpha=self.wd)
        if self.mu:
            fresh = [i for i in idx if self.bufs[i] is None]
            old = [i for i in idx if self.bufs[i] is not None]
            g_of = dict(zip(idx, gs))
            if old:
                olds = [self.bufs[i] for i in old]
                torch._foreach_mul_(olds, self.mu)
                torch._foreach_add_(olds, [g_of[i] for i in old], alpha=1 - self.damp)
            for i in fresh:
                self.bufs[i] = torch.clone(g_of[i]).detach()
            bufs = [self.bufs[i] for i in idx]
            if self.nesterov:
                gs = torch._foreach_add(gs, bufs, alpha=self.mu)
            else:
                gs = bufs
        torch._foreach_add_(ps, gs, alpha=-self.lr)
