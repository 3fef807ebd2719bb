# expect: failed pitfall=schedule-per-microbatch+best-aliases-live-weights
# source: independent pair of mistakes: a scheduler ticked after every backward over epochs * microbatches, and the best state kept as model.state_dict() itself
import math

import torch
from torch import nn


class WarmupCosineTicker:
    def __init__(self, optimizer, peak, warmup, total, floor):
        self.optimizer, self.peak, self.warmup, self.total, self.floor = optimizer, peak, warmup, total, floor
        self.count = 0

    def step(self):
        c = self.count
        if c < self.warmup:
            value = self.peak * (c + 1) / self.warmup
        else:
            q = min(1.0, (c - self.warmup) / max(1, self.total - self.warmup - 1))
            value = self.peak * (self.floor + (1 - self.floor) * 0.5 * (1 + math.cos(math.pi * q)))
        for group in self.optimizer.param_groups:
            group["lr"] = value
        self.count += 1


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    decayed, exempt = [], []
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            (exempt if name == "bias" or isinstance(module, nn.LayerNorm) else decayed).append(p)
    opt = make_optimizer([{"params": decayed, "weight_decay": weight_decay},
                          {"params": exempt, "weight_decay": 0.0}], lr)
    x, y = train
    batches = [(x[i:i + micro_size], y[i:i + micro_size]) for i in range(0, len(x), micro_size)]
    ticker = WarmupCosineTicker(opt, lr, warmup, epochs * len(batches), min_ratio)
    best, best_state = math.inf, None
    for _ in range(epochs):
        model.train()
        for k in range(0, len(batches), accumulation):
            group = batches[k:k + accumulation]
            total = sum(len(b[0]) for b in group)
            opt.zero_grad()
            for xb, yb in group:
                (loss_fn(model(xb), yb).sum() / total).backward()
                ticker.step()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            opt.step()
        model.eval()
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best:
            best, best_state = v, model.state_dict()
    return best_state
