# expect: failed pitfall=eval-in-train-mode
# Validation under torch.no_grad() only: no_grad turns off gradients, not dropout.
import copy
import math

import torch
from torch import nn


def lr_at(u, lr, warmup, total, min_ratio):
    if u < warmup:
        return lr * (u + 1) / warmup
    frac = min(1.0, (u - warmup) / max(1, total - warmup - 1))
    return lr * (min_ratio + (1 - min_ratio) * (1 + math.cos(math.pi * frac)) / 2)


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    norm_types = (nn.LayerNorm, nn.BatchNorm1d)
    decay, other = [], []
    for mod in model.modules():
        for pname, p in mod.named_parameters(recurse=False):
            if pname == "bias" or isinstance(mod, norm_types):
                other.append(p)
            else:
                decay.append(p)
    optimizer = make_optimizer([dict(params=decay, weight_decay=weight_decay), dict(params=other, weight_decay=0.0)],
                               lr)
    x, y = train
    n_micro = math.ceil(len(x) / micro_size)
    total = epochs * math.ceil(n_micro / accumulation)
    u = 0
    best, best_sd = float("inf"), None
    for _ in range(epochs):
        for g in range(0, n_micro, accumulation):
            idx = range(g, min(g + accumulation, n_micro))
            count = sum(len(x[i * micro_size:(i + 1) * micro_size]) for i in idx)
            optimizer.zero_grad()
            for i in idx:
                sl = slice(i * micro_size, (i + 1) * micro_size)
                (loss_fn(model(x[sl]), y[sl]).sum() / count).backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            for group in optimizer.param_groups:
                group["lr"] = lr_at(u, lr, warmup, total, min_ratio)
            optimizer.step()
            u += 1
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best:
            best, best_sd = v, copy.deepcopy(model.state_dict())
    return best_sd
