# expect: failed pitfall=lambda-lr-warmup
# source: transformers' get_cosine_with_min_lr_schedule_with_warmup multiplier as a LambdaLR would apply it (step / warmup from 0, cosine over total - warmup); look-alike written for this corpus
import copy
import math

import torch
from torch import nn


def cosine_with_min_lr(current_step, num_warmup_steps, num_training_steps, min_lr_rate):
    if current_step < num_warmup_steps:
        return float(current_step) / float(max(1, num_warmup_steps))
    progress = float(current_step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))
    factor = 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))
    return factor * (1 - min_lr_rate) + min_lr_rate


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    decay, skip = [], []
    for module_name, module in model.named_modules():
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
                group["lr"] = lr * cosine_with_min_lr(step, warmup, total, min_ratio)
            opt.step()
            step += 1
        model.eval()
        with torch.no_grad():
            current = loss_fn(model(val[0]), val[1]).mean().item()
        if current < best:
            best, kept = current, copy.deepcopy(model.state_dict())
    return kept
