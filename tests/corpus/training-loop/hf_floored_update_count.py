# expect: failed pitfall=total-floors-updates-per-epoch
# source: look-alike of the transformers Trainer's schedule length (written for this corpus): num_update_steps_per_epoch = len(dataloader) // gradient_accumulation_steps, times the epochs, while the loop still steps on each epoch's short last group
import copy
import math

import torch
from torch import nn

NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
         nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def get_lr(it, learning_rate, warmup_iters, lr_decay_iters, min_lr):
    if it < warmup_iters:
        return learning_rate * (it + 1) / warmup_iters
    decay_ratio = (it - warmup_iters) / max(1, lr_decay_iters - warmup_iters - 1)
    coeff = 0.5 * (1.0 + math.cos(math.pi * min(1.0, decay_ratio)))
    return min_lr + coeff * (learning_rate - min_lr)


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    decay, no_decay = [], []
    for mod in model.modules():
        for pname, p in mod.named_parameters(recurse=False):
            (no_decay if pname == "bias" or isinstance(mod, NORMS) else decay).append(p)
    optimizer = make_optimizer([{"params": decay, "weight_decay": weight_decay},
                                {"params": no_decay, "weight_decay": 0.0}], lr)
    X, Y = train
    n = len(X)
    micro = [(s, min(s + micro_size, n)) for s in range(0, n, micro_size)]
    chunks = [micro[i:i + accumulation] for i in range(0, len(micro), accumulation)]
    max_iters = epochs * max(1, len(micro) // accumulation)  # num_update_steps_per_epoch, floored
    it = 0
    best_val, best = float("inf"), None
    for _ in range(epochs):
        model.train()
        for chunk in chunks:
            count = sum(b - a for a, b in chunk)
            optimizer.zero_grad(set_to_none=True)
            for a, b in chunk:
                (loss_fn(model(X[a:b]), Y[a:b]).sum() / count).backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            lr_now = get_lr(it, lr, warmup, max_iters, lr * min_ratio)
            for g in optimizer.param_groups:
                g["lr"] = lr_now
            optimizer.step()
            it += 1
        model.eval()
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best_val:
            best_val, best = v, copy.deepcopy(model.state_dict())
    return best
