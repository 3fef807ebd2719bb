# expect: passed
# source: independent answer: microbatches from a generator, groups cut with itertools.islice, each group's per-example losses concatenated and averaged once, lr from a closure, best kept as cloned state_dict tensors
import itertools
import math

import torch
from torch import nn


def _microbatches(x, y, size):
    for i in range(0, len(x), size):
        yield x[i:i + size], y[i:i + size]


def _make_lr(peak, warmup, total, floor):
    def at(u):
        if u < warmup:
            return peak * (u + 1) / warmup
        p = min(1.0, (u - warmup) / max(1, total - warmup - 1))
        return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * p)))
    return at


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    norm_layers = tuple(c for c in (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.BatchNorm1d, nn.BatchNorm2d,
                                    nn.BatchNorm3d, nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d))
    buckets = {True: [], False: []}
    for mod in model.modules():
        for local, prm in mod.named_parameters(recurse=False):
            buckets[local == "bias" or isinstance(mod, norm_layers)].append(prm)
    opt = make_optimizer([{"params": buckets[False], "weight_decay": weight_decay},
                          {"params": buckets[True], "weight_decay": 0.0}], lr)
    x, y = train
    per_epoch = math.ceil(math.ceil(len(x) / micro_size) / accumulation)
    lr_at = _make_lr(lr, warmup, epochs * per_epoch, min_ratio)
    u = 0
    best, snapshot = None, None
    for _ in range(epochs):
        model.train()
        stream = _microbatches(x, y, micro_size)
        while True:
            group = list(itertools.islice(stream, accumulation))
            if not group:
                break
            opt.zero_grad()
            torch.cat([loss_fn(model(xb), yb) for xb, yb in group]).mean().backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm, foreach=False)
            for g in opt.param_groups:
                g["lr"] = lr_at(u)
            opt.step()
            u += 1
        model.train(False)
        with torch.no_grad():
            score = loss_fn(model(val[0]), val[1]).mean()
        if best is None or score < best:
            best = score
            snapshot = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return snapshot
