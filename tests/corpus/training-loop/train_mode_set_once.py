# expect: failed pitfall=never-back-to-train
# source: independent mistake: model.train() once before the epoch loop, model.eval() inside it for validation; from the second epoch on the model trains in eval mode
import copy
import math

import torch
from torch import nn


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    decay, no_decay = [], []
    for mod in model.modules():
        is_norm = isinstance(mod, (nn.LayerNorm, nn.BatchNorm1d, nn.BatchNorm2d))
        for name, p in mod.named_parameters(recurse=False):
            (no_decay if is_norm or name == "bias" else decay).append(p)
    opt = make_optimizer([{"params": decay, "weight_decay": weight_decay},
                          {"params": no_decay, "weight_decay": 0.0}], lr)
    x, y = train
    mbs = [(x[i:i + micro_size], y[i:i + micro_size]) for i in range(0, len(x), micro_size)]
    total = epochs * math.ceil(len(mbs) / accumulation)
    step = 0
    best, best_sd = math.inf, None
    model.train()
    for _ in range(epochs):
        for k in range(0, len(mbs), accumulation):
            grp = mbs[k:k + accumulation]
            cnt = sum(len(a) for a, _ in grp)
            opt.zero_grad()
            for a, b in grp:
                (loss_fn(model(a), b).sum() / cnt).backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            if step < warmup:
                f = (step + 1) / warmup
            else:
                f = min_ratio + (1 - min_ratio) * 0.5 * (
                    1 + math.cos(math.pi * min(1.0, (step - warmup) / max(1, total - warmup - 1))))
            for g in opt.param_groups:
                g["lr"] = lr * f
            opt.step()
            step += 1
        model.eval()
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best:
            best, best_sd = v, copy.deepcopy(model.state_dict())
    return best_sd
