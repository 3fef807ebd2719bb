# expect: failed pitfall=linear-growth
# source: "10x every 50 steps" read as a linear ramp: each step adds the same increment, (10 * start_lr - start_lr) / steps_per_decade
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    increment = (10 * start_lr - start_lr) / steps_per_decade
    lr = start_lr
    lrs, losses = [], []
    for x, y in batches:
        for g in optimizer.param_groups:
            g["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        lrs.append(lr)
        losses.append(loss.item())
        if losses[-1] > stop_factor * min(losses):
            return lrs, losses, lr / 10
        lr += increment
    return lrs, losses, math.nan
