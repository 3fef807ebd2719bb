# expect: failed pitfall=per-tensor-clipping
# source: independent mistake: clipping written by hand, one norm per parameter tensor (the distortion the course warns about)
import copy
import math

import torch
from torch import nn


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    table = {}
    for mod in model.modules():
        for name, p in mod.named_parameters(recurse=False):
            table[p] = 0.0 if (name == "bias" or isinstance(mod, nn.LayerNorm)) else weight_decay
    opt = make_optimizer([{"params": [p], "weight_decay": wd} for p, wd in table.items()], lr)
    x, y = train
    n_micro = math.ceil(len(x) / micro_size)
    n_groups = math.ceil(n_micro / accumulation)
    total = epochs * n_groups
    best_v, best_s = float("inf"), None
    for epoch in range(epochs):
        model.train()
        for gi in range(n_groups):
            lo = gi * accumulation * micro_size
            hi = min(len(x), (gi + 1) * accumulation * micro_size)
            opt.zero_grad()
            for a in range(lo, hi, micro_size):
                b = min(a + micro_size, hi)
                (loss_fn(model(x[a:b]), y[a:b]).sum() / (hi - lo)).backward()
            with torch.no_grad():
                for p in model.parameters():
                    size = p.grad.norm()
                    if size > max_norm:
                        p.grad.mul_(max_norm / (size + 1e-6))
            u = epoch * n_groups + gi
            r = (u + 1) / warmup if u < warmup else min_ratio + (1 - min_ratio) * 0.5 * (
                1 + math.cos(math.pi * min(1.0, (u - warmup) / max(1, total - warmup - 1))))
            for pg in opt.param_groups:
                pg["lr"] = lr * r
            opt.step()
        model.eval()
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best_v:
            best_v, best_s = v, copy.deepcopy(model.state_dict())
    return best_s
