# expect: passed
# source: independent answer: validation written as a loop over examples (model(x_val[i]) on 1-D rows, losses summed in Python and divided by the count), the schedule from a helper closure, best weights kept as cloned tensors
import math

import torch
from torch import nn

_NORMS = (nn.LayerNorm, nn.GroupNorm, nn.BatchNorm1d, nn.BatchNorm2d)


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    with_decay, without_decay = [], []
    for module in model.modules():
        for name, param in module.named_parameters(recurse=False):
            if name == "bias" or isinstance(module, _NORMS):
                without_decay.append(param)
            else:
                with_decay.append(param)
    optimizer = make_optimizer([{"params": with_decay, "weight_decay": weight_decay},
                                {"params": without_decay, "weight_decay": 0.0}], lr)

    x, y = train
    x_val, y_val = val
    micro = [(x[i:i + micro_size], y[i:i + micro_size]) for i in range(0, len(x), micro_size)]
    per_epoch = (len(micro) + accumulation - 1) // accumulation
    total = epochs * per_epoch

    def factor(u):
        if u < warmup:
            return (u + 1) / warmup
        done = min(1.0, (u - warmup) / max(1, total - warmup - 1))
        return min_ratio + (1 - min_ratio) * (1 + math.cos(math.pi * done)) / 2

    updates = 0
    best, kept = float("inf"), None
    for _ in range(epochs):
        model.train()
        for start in range(0, len(micro), accumulation):
            chunk = micro[start:start + accumulation]
            examples = sum(len(xb) for xb, _ in chunk)
            optimizer.zero_grad()
            for xb, yb in chunk:
                (loss_fn(model(xb), yb).sum() / examples).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            for group in optimizer.param_groups:
                group["lr"] = lr * factor(updates)
            optimizer.step()
            updates += 1

        model.eval()
        total_loss = 0.0
        with torch.no_grad():
            for i in range(len(x_val)):
                total_loss += float(loss_fn(model(x_val[i]), y_val[i]))
        mean_loss = total_loss / len(x_val)
        if mean_loss < best:
            best = mean_loss
            kept = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return kept
