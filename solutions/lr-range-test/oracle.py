"""Oracle for lr-range-test: the same test driven by torch's own scheduler.

A second derivation of the growth, written independently of the reference: instead of computing
start_lr * 10 ** (step / steps_per_decade), every group is set to start_lr once and
torch.optim.lr_scheduler.ExponentialLR multiplies each group's lr by 10 ** (1 / steps_per_decade)
after every step; the lr each step used is read back from the scheduler (get_last_lr) rather than
kept by hand. The stop rule keeps a running best instead of calling min() on the curve."""

import math

from torch.optim.lr_scheduler import ExponentialLR


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    for group in optimizer.param_groups:
        group["lr"] = start_lr
        group.pop("initial_lr", None)  # a scheduler attached earlier would restart from it
    scheduler = ExponentialLR(optimizer, gamma=10 ** (1 / steps_per_decade))
    lrs, losses, best = [], [], math.inf
    for x, y in batches:
        lr = scheduler.get_last_lr()[0]
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        value = float(loss.detach())
        lrs.append(lr)
        losses.append(value)
        best = min(best, value)
        if value > stop_factor * best:
            return lrs, losses, lr / 10
    return lrs, losses, math.nan
