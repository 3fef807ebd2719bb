# expect: failed pitfall=clip-after-step
# source: independent mistake: "clip, then zero" tidy-up written after optimizer.step(), so the clip never touches a gradient that is applied
import copy
import math

import torch
from torch import nn


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    decay = []
    keep = []
    for m in model.modules():
        for n, p in m.named_parameters(recurse=False):
            if isinstance(m, nn.LayerNorm) or n == "bias":
                keep.append(p)
            else:
                decay.append(p)
    opt = make_optimizer([{"params": decay, "weight_decay": weight_decay}, {"params": keep, "weight_decay": 0.0}],
                         lr)
    x, y = train
    starts = range(0, len(x), micro_size)
    plan = [list(starts)[i:i + accumulation] for i in range(0, len(starts), accumulation)]
    total = epochs * len(plan)
    u = 0
    best, best_state = math.inf, None
    for _ in range(epochs):
        model.train()
        for group in plan:
            N = sum(min(micro_size, len(x) - s) for s in group)
            for s in group:
                (loss_fn(model(x[s:s + micro_size]), y[s:s + micro_size]).sum() / N).backward()
            r = (u + 1) / warmup if u < warmup else min_ratio + (1 - min_ratio) * 0.5 * (
                1 + math.cos(math.pi * min(1.0, (u - warmup) / max(1, total - warmup - 1))))
            for g in opt.param_groups:
                g["lr"] = lr * r
            opt.step()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            opt.zero_grad()
            u += 1
        model.eval()
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best:
            best, best_state = v, copy.deepcopy(model.state_dict())
    return best_state
