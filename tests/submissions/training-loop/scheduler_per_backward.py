# expect: failed pitfall=schedule-per-microbatch
# A scheduler object ticked after every backward, sized in microbatches (len(batches) * epochs).
import copy
import math

import torch
from torch import nn


class Schedule:
    def __init__(self, optimizer, base_lr, warmup, total, floor):
        self.opt, self.base, self.warmup, self.total, self.floor = optimizer, base_lr, warmup, total, floor
        self.t = 0

    def tick(self):
        t = self.t
        if t < self.warmup:
            r = (t + 1) / self.warmup
        else:
            r = self.floor + (1 - self.floor) * 0.5 * (
                1 + math.cos(math.pi * min(1.0, (t - self.warmup) / max(1, self.total - self.warmup - 1))))
        for g in self.opt.param_groups:
            g["lr"] = self.base * r
        self.t += 1


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    exempt = {id(p) for m in model.modules() if isinstance(m, nn.LayerNorm) for p in m.parameters()}
    exempt |= {id(p) for n, p in model.named_parameters() if n.split(".")[-1] == "bias"}
    decay = [p for p in model.parameters() if id(p) not in exempt]
    rest = [p for p in model.parameters() if id(p) in exempt]
    opt = make_optimizer([{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}],
                         lr)
    x, y = train
    starts = list(range(0, len(x), micro_size))
    sched = Schedule(opt, lr, warmup, epochs * len(starts), min_ratio)
    best, keep = math.inf, None
    for _ in range(epochs):
        model.train()
        for g0 in range(0, len(starts), accumulation):
            group = starts[g0:g0 + accumulation]
            n = sum(min(micro_size, len(x) - s) for s in group)
            opt.zero_grad()
            for s in group:
                (loss_fn(model(x[s:s + micro_size]), y[s:s + micro_size]).sum() / n).backward()
                sched.tick()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            opt.step()
        model.eval()
        with torch.no_grad():
            v = loss_fn(model(val[0]), val[1]).mean().item()
        if v < best:
            best, keep = v, copy.deepcopy(model.state_dict())
    return keep
