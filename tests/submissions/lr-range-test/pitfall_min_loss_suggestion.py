# expect: failed pitfall=suggest-at-minimum
# Everything right but the suggestion: the lr where the curve bottoms out (torch.argmin over the curve).
import math

import torch


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses = [], []
    diverged = False
    for step, (x, y) in enumerate(batches):
        lr = start_lr * 10 ** (step / steps_per_decade)
        for g in optimizer.param_groups:
            g["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        lrs.append(lr)
        losses.append(loss.item())
        if losses[-1] > stop_factor * min(losses):
            diverged = True
            break
    if not diverged:
        return lrs, losses, math.nan
    return lrs, losses, lrs[int(torch.tensor(losses).argmin())]
