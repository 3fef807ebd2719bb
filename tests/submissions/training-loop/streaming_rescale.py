# expect: passed
"""Streaming style: one while loop over microbatch indices, raw loss sums backpropagated and the
gradients divided by the group's count just before a hand-written global clip; the lr comes from
a small schedule class; best weights kept as detached clones of the parameters only."""
import math

import torch
import torch.nn as nn


class WarmupCosine:
    def __init__(self, peak, warmup, total, floor):
        self.peak, self.warmup, self.total, self.floor = peak, warmup, total, floor

    def __call__(self, u):
        if u < self.warmup:
            return self.peak * (u + 1) / self.warmup
        t = (u - self.warmup) / max(1, self.total - self.warmup - 1)
        t = min(t, 1.0)
        return self.peak * (self.floor + (1 - self.floor) * (1 + math.cos(math.pi * t)) / 2)


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    no_decay = set()
    for m in model.modules():
        norm = isinstance(m, (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.modules.batchnorm._NormBase))
        for n, p in m.named_parameters(recurse=False):
            if norm or n == "bias":
                no_decay.add(p)
    params = list(model.parameters())
    opt = make_optimizer([{"params": [p for p in params if p not in no_decay], "weight_decay": weight_decay},
                          {"params": [p for p in params if p in no_decay], "weight_decay": 0.0}], lr)

    xs, ys = train
    n = xs.shape[0]
    n_micro = -(-n // micro_size)
    per_epoch = -(-n_micro // accumulation)
    sched = WarmupCosine(lr, warmup, epochs * per_epoch, min_ratio)
    step = 0
    best, best_params = float("inf"), None
    for _ in range(epochs):
        model.train()
        i = 0
        while i < n_micro:
            opt.zero_grad(set_to_none=True)
            seen = 0
            for j in range(i, min(i + accumulation, n_micro)):
                xb, yb = xs[j * micro_size:(j + 1) * micro_size], ys[j * micro_size:(j + 1) * micro_size]
                loss_fn(model(xb), yb).sum().backward()
                seen += xb.shape[0]
            i += accumulation
            with torch.no_grad():
                for p in params:
                    p.grad /= seen
                total = torch.sqrt(sum((p.grad ** 2).sum() for p in params))
                coef = max_norm / (total + 1e-6)
                if coef < 1:
                    for p in params:
                        p.grad *= coef
            for g in opt.param_groups:
                g["lr"] = sched(step)
            opt.step()
            step += 1
        model.eval()
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best:
            best = v
            best_params = {k: t.detach().clone() for k, t in model.named_parameters()}
    return best_params
