# expect: forbidden
# Reaches LambdaLR by a computed name, so only the runtime guard can see it.
import math

import torch

sched_module = getattr(torch.optim, "lr_" + "scheduler")
Lam = getattr(sched_module, "Lambda" + "LR")


def _formula(step, warmup_steps, total_steps, min_ratio):
    if step < warmup_steps:
        return step / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1.0)
    sched = Lam(opt, lambda s: _formula(s, warmup_steps, total_steps, min_ratio), last_epoch=-1)
    for _ in range(step):
        opt.step()
        sched.step()
    return sched.get_last_lr()[0]
