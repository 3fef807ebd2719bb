# expect: failed pitfall=drop-tail
# The (i + 1) % accumulation loop: the short group at the end of each epoch never steps.
import copy
import math

import torch
from torch import nn


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    groups = [{"params": [], "weight_decay": weight_decay}, {"params": [], "weight_decay": 0.0}]
    for mod in model.modules():
        for name, p in mod.named_parameters(recurse=False):
            groups[int(name == "bias" or isinstance(mod, nn.LayerNorm))]["params"].append(p)
    opt = make_optimizer(groups, lr)
    x, y = train
    batches = [(x[i:i + micro_size], y[i:i + micro_size]) for i in range(0, len(x), micro_size)]
    total = epochs * math.ceil(len(batches) / accumulation)
    updates = 0
    best, state = math.inf, None
    for _ in range(epochs):
        model.train()
        opt.zero_grad()
        seen = 0
        for i, (xb, yb) in enumerate(batches):
            loss_fn(model(xb), yb).sum().backward()
            seen += len(xb)
            if (i + 1) % accumulation == 0:
                for p in model.parameters():
                    p.grad.div_(seen)
                seen = 0
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                if updates < warmup:
                    f = (updates + 1) / warmup
                else:
                    f = min_ratio + (1 - min_ratio) * 0.5 * (
                        1 + math.cos(math.pi * min(1, (updates - warmup) / max(1, total - warmup - 1))))
                for g in opt.param_groups:
                    g["lr"] = lr * f
                opt.step()
                opt.zero_grad()
                updates += 1
        model.eval()
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best:
            best, state = v, copy.deepcopy(model.state_dict())
    return state
