# expect: passed
# torch's LambdaLR drives the sweep: every group starts at start_lr, the multiplier is 10 ** (s / decade),
# and each step's lr is read back from the groups before stepping; a running best instead of min().
import math

import torch


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    for g in optimizer.param_groups:
        g["lr"] = start_lr
    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 10.0 ** (s / steps_per_decade))
    lrs, losses = [], []
    best = float("inf")
    for x, y in batches:
        current = optimizer.param_groups[0]["lr"]
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        sched.step()
        lrs.append(current)
        losses.append(loss.item())
        best = min(best, losses[-1])
        if losses[-1] > stop_factor * best:
            return lrs, losses, current / 10.0
    return lrs, losses, math.nan
