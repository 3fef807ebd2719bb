# expect: failed pitfall=lr-one-update-late
# source: independent mistake: the loop mimics "optimizer.step(); scheduler.step()" by writing the next lr after each step, but computes the lr for the update just made, so every update runs on the previous one's value
import copy
import math

import torch
from torch import nn


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    exempt = set()
    for m in model.modules():
        for n, p in m.named_parameters(recurse=False):
            if n == "bias" or isinstance(m, (nn.LayerNorm, nn.GroupNorm)):
                exempt.add(id(p))
    opt = make_optimizer([{"params": [p for p in model.parameters() if id(p) not in exempt],
                           "weight_decay": weight_decay},
                          {"params": [p for p in model.parameters() if id(p) in exempt], "weight_decay": 0.0}], lr)
    x, y = train
    groups = []
    micro = [slice(i, i + micro_size) for i in range(0, len(x), micro_size)]
    for i in range(0, len(micro), accumulation):
        groups.append(micro[i:i + accumulation])
    total = epochs * len(groups)

    def factor(t):
        if t < warmup:
            return (t + 1) / warmup
        return min_ratio + (1 - min_ratio) * (1 + math.cos(math.pi * min(1.0, (t - warmup) / max(1, total - warmup - 1)))) / 2

    t = 0
    best = (math.inf, None)
    for _ in range(epochs):
        model.train()
        for g in groups:
            opt.zero_grad()
            n = sum(x[s].shape[0] for s in g)
            for s in g:
                (loss_fn(model(x[s]), y[s]).sum() / n).backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            opt.step()
            for pg in opt.param_groups:
                pg["lr"] = lr * factor(t)
            t += 1
        model.eval()
        with torch.no_grad():
            loss = loss_fn(model(val[0]), val[1]).mean().item()
        if loss < best[0]:
            best = (loss, copy.deepcopy(model.state_dict()))
    return best[1]
