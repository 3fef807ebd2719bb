# expect: failed pitfall=first-group-only
# The lr written through a helper that only knows the first group.
import math


def set_lr(optimizer, lr):
    optimizer.param_groups[0]["lr"] = lr


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses = [], []
    for i, (x, y) in enumerate(batches):
        lr = start_lr * 10 ** (i / steps_per_decade)
        set_lr(optimizer, lr)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        lrs.append(lr)
        losses.append(loss.item())
        if loss.item() > stop_factor * min(losses):
            return lrs, losses, lr / 10
    return lrs, losses, math.nan
