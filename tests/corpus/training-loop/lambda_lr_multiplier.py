# expect: failed pitfall=lambda-lr-warmup
# source: look-alike of transformers' warmup + cosine-with-min-lr convention as a LambdaLR applies it (step / warmup from step 0, cosine over total - warmup), written for this corpus
import copy
import math

import torch
from torch import nn


def warmup_cosine_multiplier(t, warm, length, floor):
    """The multiplier a LambdaLR would apply at its t-th step (t = 0 before the first update)."""
    if t < warm:
        return t / max(1, warm)
    done = min(1.0, (t - warm) / max(1, length - warm))
    return floor + (1 - floor) * (1 + math.cos(math.pi * done)) / 2


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    decay, skip = [], []
    for _name, module in model.named_modules():
        for name, p in module.named_parameters(recurse=False):
            (skip if name == "bias" or isinstance(module, (nn.LayerNorm, nn.BatchNorm1d)) else decay).append(p)
    opt = make_optimizer([{"params": decay, "weight_decay": weight_decay}, {"params": skip, "weight_decay": 0.0}],
                         lr)
    x, y = train
    starts = list(range(0, len(x), micro_size))
    total = epochs * math.ceil(len(starts) / accumulation)
    step = 0
    best, kept = math.inf, None
    for _ in range(epochs):
        model.train()
        for g in range(0, len(starts), accumulation):
            chunk = starts[g:g + accumulation]
            count = sum(len(x[s:s + micro_size]) for s in chunk)
            opt.zero_grad()
            for s in chunk:
                (loss_fn(model(x[s:s + micro_size]), y[s:s + micro_size]).sum() / count).backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            for group in opt.param_groups:
                group["lr"] = lr * warmup_cosine_multiplier(step, warmup, total, min_ratio)
            opt.step()
            step += 1
        model.eval()
        with torch.no_grad():
            current = loss_fn(model(val[0]), val[1]).mean().item()
        if current < best:
            best, kept = current, copy.deepcopy(model.state_dict())
    return kept
