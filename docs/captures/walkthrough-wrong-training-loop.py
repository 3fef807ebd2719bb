"""A complete training loop. Run `grind run training-loop` to check your answer."""

import copy
import math

import torch
from torch import nn

NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.modules.batchnorm._BatchNorm, nn.modules.instancenorm._InstanceNorm)


def _ratio(u, warmup, total, min_ratio):
    if u < warmup:
        return u / warmup
    rest = total - warmup
    if rest <= 1:
        return 1.0
    prog = (u - warmup) / (rest - 1)
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * prog))


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    decay, no_decay = [], []
    for mod in model.modules():
        for name, p in mod.named_parameters(recurse=False):
            if isinstance(mod, NORMS) or name == "bias":
                no_decay.append(p)
            else:
                decay.append(p)
    opt = make_optimizer([{"params": decay, "weight_decay": weight_decay},
                          {"params": no_decay, "weight_decay": 0.0}], lr)
    x, y = train
    n = x.shape[0]
    micro = [(i, min(i + micro_size, n)) for i in range(0, n, micro_size)]
    groups = [micro[i:i + accumulation] for i in range(0, len(micro), accumulation)]
    total = epochs * len(groups)
    u = 0
    best, best_loss = None, float("inf")
    for _ in range(epochs):
        model.train()
        for grp in groups:
            opt.zero_grad()
            count = sum(b - a for a, b in grp)
            for a, b in grp:
                loss_fn(model(x[a:b]), y[a:b]).sum().div(count).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            for g in opt.param_groups:
                g["lr"] = lr * _ratio(u, warmup, total, min_ratio)
            opt.step()
            u += 1
        model.eval()
        with torch.no_grad():
            vl = loss_fn(model(val[0]), val[1]).mean().item()
        if vl < best_loss:
            best_loss = vl
            best = {k: v.detach().clone() for k, v in model.named_parameters()}
        model.train()
    return best
