"""Oracle for training-loop. torch has no training loop to call, so this is a second
derivation, written independently of the reference, that the tests hold the reference to:

- no accumulation at all: each group's microbatches are concatenated and one mean loss over
  the group is differentiated in one backward pass (the cases' networks treat every example
  on its own, so this is the same gradient);
- the global norm and the clip are computed by hand from the gradients, not by clip_grad_norm_;
- the whole schedule is tabulated before training, from the number of groups, with warmup and
  cosine written as one piecewise expression over the update index;
- parameters are grouped by qualified name (owner found with get_submodule), one group per
  parameter, which also exercises "any number of groups";
- the best weights are kept as clones of named_parameters() only, not a deep copy of the
  state dict.
"""

import math

import torch
from torch import nn
from torch.nn.modules.batchnorm import _NormBase

NORMS = (_NormBase, nn.LayerNorm, nn.GroupNorm, nn.RMSNorm)


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    groups = []
    for name, param in model.named_parameters():
        owner, _, local = name.rpartition(".")
        exempt = local == "bias" or isinstance(model.get_submodule(owner), NORMS)
        groups.append({"params": [param], "weight_decay": 0.0 if exempt else weight_decay})
    optimizer = make_optimizer(groups, lr)

    x, y = train
    examples_per_group = micro_size * accumulation
    spans = [(s, min(s + examples_per_group, len(x))) for s in range(0, len(x), examples_per_group)]
    total = epochs * len(spans)
    lrs = [lr * ((u + 1) / warmup if u < warmup else
                 min_ratio + (1 - min_ratio) * (1 + math.cos(math.pi * min(1.0, (u - warmup) / max(1, total - warmup - 1))))
                 / 2)
           for u in range(total)]

    best, kept, u = None, None, 0
    for _ in range(epochs):
        model.train(True)
        for start, end in spans:
            for param in model.parameters():
                param.grad = None
            loss_fn(model(x[start:end]), y[start:end]).mean().backward()
            grads = [p.grad for p in model.parameters()]
            norm = math.sqrt(sum(float((g * g).sum()) for g in grads))
            factor = max_norm / (norm + 1e-6)
            if factor < 1:
                for g in grads:
                    g.mul_(factor)
            for group in optimizer.param_groups:
                group["lr"] = lrs[u]
            optimizer.step()
            u += 1
        model.train(False)
        with torch.inference_mode():
            loss = float(loss_fn(model(val[0]), val[1]).sum()) / len(val[0])
        if best is None or loss < best:
            best = loss
            kept = {name: p.detach().clone() for name, p in model.named_parameters()}
    return kept
