# expect: failed pitfall=mean-of-microbatch-means
# source: independent mistake: each microbatch's mean loss divided by the number of microbatches actually in the group (the fix for the fixed divisor, made on means), so a short microbatch's examples weigh more
import copy
import math

import torch
import torch.nn as nn


class Trainer:
    NO_DECAY_TYPES = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.modules.batchnorm._BatchNorm,
                      nn.modules.instancenorm._InstanceNorm)

    def __init__(self, model, make_optimizer, loss_fn, cfg):
        self.model, self.loss_fn, self.cfg = model, loss_fn, cfg
        plain, special = [], []
        for module in model.modules():
            for key, value in module._parameters.items():
                if value is None:
                    continue
                bucket = special if key == "bias" or isinstance(module, self.NO_DECAY_TYPES) else plain
                bucket.append(value)
        self.opt = make_optimizer([{"params": plain, "weight_decay": cfg["weight_decay"]},
                                   {"params": special, "weight_decay": 0.0}], cfg["lr"])
        self.t = 0

    def factor(self, total):
        w = self.cfg["warmup"]
        if self.t < w:
            return (self.t + 1) / w
        p = min(1.0, (self.t - w) / max(1, total - w - 1))
        m = self.cfg["min_ratio"]
        return m + (1 - m) * (1 + math.cos(math.pi * p)) / 2

    def update(self, pieces, total):
        self.opt.zero_grad()
        for xs, ys in pieces:
            per_example = self.loss_fn(self.model(xs), ys)
            (per_example.mean() / len(pieces)).backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg["max_norm"])
        for g in self.opt.param_groups:
            g["lr"] = self.cfg["lr"] * self.factor(total)
        self.opt.step()
        self.t += 1


def fit(model, train, val, make_optimizer, loss_fn, **cfg):
    trainer = Trainer(model, make_optimizer, loss_fn, cfg)
    x, y = train
    size, acc = cfg["micro_size"], cfg["accumulation"]
    pieces = [(x[i:i + size], y[i:i + size]) for i in range(0, x.shape[0], size)]
    groups = [pieces[i:i + acc] for i in range(0, len(pieces), acc)]
    total = cfg["epochs"] * len(groups)
    best, kept = math.inf, None
    for _ in range(cfg["epochs"]):
        model.train()
        for g in groups:
            trainer.update(g, total)
        model.eval()
        with torch.no_grad():
            score = float(loss_fn(model(val[0]), val[1]).mean())
        if score < best:
            best, kept = score, {k: v.detach().clone() for k, v in model.state_dict().items()}
    return kept
