# expect: failed pitfall=divergent-point-dropped
# source: a guard-clause loop: the divergence test comes first and breaks before the point is stored, so the curve ends one step short
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses = [], []
    best = math.inf
    for n, (x, y) in enumerate(batches):
        lr = start_lr * 10 ** (n / steps_per_decade)
        for g in optimizer.param_groups:
            g["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        value = loss.item()
        best = min(best, value)
        if value > stop_factor * best:
            return lrs, losses, lr / 10
        lrs.append(lr)
        losses.append(value)
    return lrs, losses, math.nan
