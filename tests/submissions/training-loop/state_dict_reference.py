# expect: failed pitfall=best-aliases-live-weights
# Everything right except the snapshot: state_dict() hands back the live tensors.
import math

import torch
from torch import nn

NORMS = (nn.LayerNorm, nn.BatchNorm1d, nn.GroupNorm, nn.RMSNorm)


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    wd, no_wd = [], []
    for module in model.modules():
        for name, param in module.named_parameters(recurse=False):
            (no_wd if isinstance(module, NORMS) or name == "bias" else wd).append(param)
    opt = make_optimizer([{"params": wd, "weight_decay": weight_decay}, {"params": no_wd, "weight_decay": 0.0}], lr)
    x, y = train
    mbs = [(x[i:i + micro_size], y[i:i + micro_size]) for i in range(0, len(x), micro_size)]
    groups = [mbs[i:i + accumulation] for i in range(0, len(mbs), accumulation)]
    total = epochs * len(groups)
    u = 0
    best_val = math.inf
    best_state = model.state_dict()
    for _epoch in range(epochs):
        model.train()
        for group in groups:
            count = sum(len(xb) for xb, _ in group)
            opt.zero_grad()
            for xb, yb in group:
                (loss_fn(model(xb), yb).sum() / count).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            if u < warmup:
                scale = (u + 1) / warmup
            else:
                prog = min(1.0, (u - warmup) / max(1, total - warmup - 1))
                scale = min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * prog))
            for g in opt.param_groups:
                g["lr"] = lr * scale
            opt.step()
            u += 1
        model.eval()
        with torch.no_grad():
            val_loss = loss_fn(model(val[0]), val[1]).mean().item()
        if val_loss < best_val:
            best_val = val_loss
            best_state = model.state_dict()
    return best_state
