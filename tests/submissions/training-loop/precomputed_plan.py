# expect: passed
"""Plan first, train second: every update's slices and learning rate are worked out before the
first forward pass (a list of (lr, [slices]) per epoch), the groups come from one pass over
named_parameters with owners looked up by name, and the best state is a deepcopy of the module."""
import copy
import math

import torch
from torch import nn


def schedule(total, warmup, floor):
    out = []
    for u in range(total):
        if u < warmup:
            out.append((u + 1) / warmup)
        else:
            p = min(1.0, (u - warmup) / max(1, total - warmup - 1))
            out.append(floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * p)))
    return out


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    decay, keep = [], []
    modules = dict(model.named_modules())
    for name, p in model.named_parameters():
        owner, _, last = name.rpartition(".")
        if last == "bias" or isinstance(modules[owner], (nn.LayerNorm, nn.BatchNorm1d, nn.GroupNorm)):
            keep.append(p)
        else:
            decay.append(p)
    optimizer = make_optimizer([{"params": keep, "weight_decay": 0.0},
                                {"params": decay, "weight_decay": weight_decay}], lr)

    x, y = train
    slices = [slice(a, a + micro_size) for a in range(0, len(x), micro_size)]
    plan = [slices[k:k + accumulation] for k in range(0, len(slices), accumulation)]
    ratios = iter(schedule(epochs * len(plan), warmup, min_ratio))

    best_loss, best_model = None, None
    for _epoch in range(epochs):
        model.train(True)
        for group in plan:
            n = sum(len(x[s]) for s in group)
            optimizer.zero_grad()
            for s in group:
                (loss_fn(model(x[s]), y[s]).sum() / n).backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            r = next(ratios)
            for g in optimizer.param_groups:
                g["lr"] = lr * r
            optimizer.step()
        model.train(False)
        with torch.inference_mode():
            loss = loss_fn(model(val[0]), val[1]).mean().item()
        if best_loss is None or loss < best_loss:
            best_loss, best_model = loss, copy.deepcopy(model)
    return best_model.state_dict()
