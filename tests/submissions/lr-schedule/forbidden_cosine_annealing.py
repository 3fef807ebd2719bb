# expect: forbidden
import torch
from torch.optim.lr_scheduler import CosineAnnealingLR


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1.0)
    sched = CosineAnnealingLR(opt, T_max=total_steps - warmup_steps, eta_min=min_ratio)
    for _ in range(min(step, total_steps) - warmup_steps):
        opt.step()
        sched.step()
    return opt.param_groups[0]["lr"]
