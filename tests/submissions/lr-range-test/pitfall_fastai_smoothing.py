# expect: failed pitfall=fastai-smoothed-curve
# The habit of fastai's lr_find: a debiased moving average (beta 0.98) is what gets plotted and tested.
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    beta, avg = 0.98, 0.0
    lrs, losses, best = [], [], math.inf
    for n, (x, y) in enumerate(batches, start=1):
        lr = start_lr * 10 ** ((n - 1) / steps_per_decade)
        for g in optimizer.param_groups:
            g["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        avg = beta * avg + (1 - beta) * loss.item()
        smoothed = avg / (1 - beta ** n)
        lrs.append(lr)
        losses.append(smoothed)
        best = min(best, smoothed)
        if smoothed > stop_factor * best:
            return lrs, losses, lr / 10
    return lrs, losses, math.nan
