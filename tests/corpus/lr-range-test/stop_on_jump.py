# expect: failed pitfall=stop-against-previous-loss
# source: a "spike detector" reading of the stop rule: compare each loss with the one just before it
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses = [], []
    previous = None
    for step, (x, y) in enumerate(batches):
        lr = start_lr * 10 ** (step / steps_per_decade)
        for g in optimizer.param_groups:
            g["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        value = loss.item()
        lrs.append(lr)
        losses.append(value)
        if previous is not None and value > stop_factor * previous:
            return lrs, losses, lr / 10
        previous = value
    return lrs, losses, math.nan
