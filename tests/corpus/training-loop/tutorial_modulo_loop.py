# expect: failed pitfall=drop-tail+mean-over-accumulation
# source: the tutorial accumulation loop, loss.mean() / accumulation and a step when (i + 1) % accumulation == 0, so the short last group never steps (schedule sized by the statement's formula)
import copy
import math

import torch
from torch import nn


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    skip = {id(p) for m in model.modules() if isinstance(m, nn.LayerNorm) for p in m.parameters()}
    skip |= {id(p) for n, p in model.named_parameters() if n.rsplit(".", 1)[-1] == "bias"}
    params = list(model.parameters())
    opt = make_optimizer([{"params": [p for p in params if id(p) not in skip], "weight_decay": weight_decay},
                          {"params": [p for p in params if id(p) in skip], "weight_decay": 0.0}], lr)
    x, y = train
    loader = [(x[i:i + micro_size], y[i:i + micro_size]) for i in range(0, len(x), micro_size)]
    total = epochs * math.ceil(math.ceil(len(x) / micro_size) / accumulation)
    updates = 0
    best, state = math.inf, None
    for _ in range(epochs):
        model.train()
        opt.zero_grad()
        for i, (xb, yb) in enumerate(loader):
            loss = loss_fn(model(xb), yb).mean() / accumulation
            loss.backward()
            if (i + 1) % accumulation == 0:
                nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                if updates < warmup:
                    scale = (updates + 1) / warmup
                else:
                    progress = min(1.0, (updates - warmup) / max(1, total - warmup - 1))
                    scale = min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
                for g in opt.param_groups:
                    g["lr"] = lr * scale
                opt.step()
                opt.zero_grad()
                updates += 1
        model.eval()
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best:
            best, state = v, copy.deepcopy(model.state_dict())
    return state
