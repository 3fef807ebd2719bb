# expect: failed pitfall=mean-over-accumulation
# source: nanoGPT's train.py habit, loss = loss / gradient_accumulation_steps on each microbatch's mean (look-alike written for this corpus around the exercise's loop; the tail and the short microbatch are where it goes wrong)
import copy
import math

import torch
from torch import nn


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    gradient_accumulation_steps = accumulation
    decay_params, nodecay_params = [], []
    for _mn, m in model.named_modules():
        for pn, p in m.named_parameters(recurse=False):
            if pn.endswith("bias") or isinstance(m, nn.LayerNorm):
                nodecay_params.append(p)
            else:
                decay_params.append(p)
    optim_groups = [{"params": decay_params, "weight_decay": weight_decay},
                    {"params": nodecay_params, "weight_decay": 0.0}]
    optimizer = make_optimizer(optim_groups, lr)
    X, Y = train
    micro = [(X[i:i + micro_size], Y[i:i + micro_size]) for i in range(0, len(X), micro_size)]
    max_iters = epochs * math.ceil(len(micro) / gradient_accumulation_steps)

    def get_lr(it):
        if it < warmup:
            return lr * (it + 1) / warmup
        decay_ratio = min(1.0, (it - warmup) / max(1, max_iters - warmup - 1))
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return lr * (min_ratio + coeff * (1 - min_ratio))

    iter_num = 0
    best_val_loss, best_state = 1e9, None
    for _ in range(epochs):
        model.train()
        for g in range(0, len(micro), gradient_accumulation_steps):
            optimizer.zero_grad(set_to_none=True)
            for xb, yb in micro[g:g + gradient_accumulation_steps]:
                loss = loss_fn(model(xb), yb).mean()
                loss = loss / gradient_accumulation_steps
                loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            for param_group in optimizer.param_groups:
                param_group["lr"] = get_lr(iter_num)
            optimizer.step()
            iter_num += 1
        model.eval()
        with torch.no_grad():
            val_loss = loss_fn(model(val[0]), val[1]).mean().item()
        if val_loss < best_val_loss:
            best_val_loss = val_loss
            best_state = copy.deepcopy(model.state_dict())
    return best_state
