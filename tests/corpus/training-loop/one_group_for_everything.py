# expect: failed pitfall=decay-everything
# source: independent mistake: every parameter in one group with the decay, as when a model is handed to AdamW(model.parameters(), weight_decay=...)
import copy
import math

import torch


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    opt = make_optimizer([{"params": list(model.parameters()), "weight_decay": weight_decay}], lr)
    x, y = train
    idx = torch.arange(len(x))
    micro = list(idx.split(micro_size))
    groups = [micro[i:i + accumulation] for i in range(0, len(micro), accumulation)]
    total = epochs * len(groups)
    u = 0
    best, best_state = math.inf, None
    for _ in range(epochs):
        model.train()
        for grp in groups:
            opt.zero_grad()
            size = sum(len(ix) for ix in grp)
            for ix in grp:
                (loss_fn(model(x[ix]), y[ix]).sum() / size).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            if u < warmup:
                mult = (u + 1) / warmup
            else:
                mult = min_ratio + (1 - min_ratio) * 0.5 * (
                    1 + math.cos(math.pi * min(1.0, (u - warmup) / max(1, total - warmup - 1))))
            for g in opt.param_groups:
                g["lr"] = lr * mult
            opt.step()
            u += 1
        model.eval()
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best:
            best, best_state = v, copy.deepcopy(model.state_dict())
    return best_state
