# expect: passed
# source: independent answer: torch.nn.utils.get_total_norm and clip_grads_with_norm_ (the split clipping API), the best weights kept as one flat vector and loaded back into the model before returning its state_dict
import math

import torch
from torch import nn
from torch.nn.utils import clip_grads_with_norm_, get_total_norm, parameters_to_vector, vector_to_parameters


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    exempt = []
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            if name == "bias" or isinstance(module, (nn.LayerNorm, nn.modules.batchnorm._NormBase, nn.GroupNorm)):
                exempt.append(p)
    ids = {id(p) for p in exempt}
    params = list(model.parameters())
    optimizer = make_optimizer([{"params": [p for p in params if id(p) not in ids], "weight_decay": weight_decay},
                                {"params": exempt, "weight_decay": 0.0}], lr)
    x, y = train
    n = len(x)
    bounds = [(a, min(a + micro_size, n)) for a in range(0, n, micro_size)]
    groups = [bounds[i:i + accumulation] for i in range(0, len(bounds), accumulation)]
    total = epochs * len(groups)
    best_vec, best_val = None, math.inf
    u = 0
    for _ in range(epochs):
        model.train()
        for group in groups:
            denom = group[-1][1] - group[0][0]
            for p in params:
                p.grad = None
            for a, b in group:
                (loss_fn(model(x[a:b]), y[a:b]).sum() / denom).backward()
            grads = [p.grad for p in params]
            clip_grads_with_norm_(params, max_norm, get_total_norm(grads))
            ratio = ((u + 1) / warmup if u < warmup else
                     min_ratio + (1 - min_ratio) * 0.5
                     * (1 + math.cos(math.pi * min(1.0, (u - warmup) / max(1, total - warmup - 1)))))
            for g in optimizer.param_groups:
                g["lr"] = lr * ratio
            optimizer.step()
            u += 1
        model.eval()
        with torch.no_grad():
            v = float(loss_fn(model(val[0]), val[1]).mean())
            if v < best_val:
                best_val, best_vec = v, parameters_to_vector(params).clone()
    with torch.no_grad():
        vector_to_parameters(best_vec, params)
    return model.state_dict()
