# expect: failed pitfall=clip-before-last-backward
# The clip sits inside the microbatch loop, so it runs after every backward of the group.
import copy
import math

import torch
from torch import nn


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    exempt_ids = set()
    for m in model.modules():
        if isinstance(m, (nn.LayerNorm, nn.GroupNorm, nn.BatchNorm1d)):
            exempt_ids |= {id(p) for p in m.parameters(recurse=False)}
        if isinstance(getattr(m, "bias", None), nn.Parameter):
            exempt_ids.add(id(m.bias))
    ps = list(model.parameters())
    opt = make_optimizer([{"params": [p for p in ps if id(p) not in exempt_ids], "weight_decay": weight_decay},
                          {"params": [p for p in ps if id(p) in exempt_ids], "weight_decay": 0.0}], lr)
    x, y = train
    micro = [(x[i:i + micro_size], y[i:i + micro_size]) for i in range(0, len(x), micro_size)]
    groups = [micro[i:i + accumulation] for i in range(0, len(micro), accumulation)]
    total = epochs * len(groups)
    best, saved = math.inf, None
    u = 0
    for _ in range(epochs):
        model.train()
        for group in groups:
            N = sum(len(a) for a, _ in group)
            opt.zero_grad()
            for a, b in group:
                (loss_fn(model(a), b).sum() / N).backward()
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            if u < warmup:
                r = (u + 1) / warmup
            else:
                r = min_ratio + (1 - min_ratio) * 0.5 * (
                    1 + math.cos(math.pi * min(1, (u - warmup) / max(1, total - warmup - 1))))
            for g in opt.param_groups:
                g["lr"] = lr * r
            opt.step()
            u += 1
        model.eval()
        with torch.no_grad():
            vl = loss_fn(model(val[0]), val[1]).mean().item()
        if vl < best:
            best, saved = vl, copy.deepcopy(model.state_dict())
    return saved
