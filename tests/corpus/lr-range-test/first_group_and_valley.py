# expect: failed pitfall=first-group-only+suggest-at-minimum
# source: two habits together: the one-group lr setter and the bottom of the curve as the suggestion
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses = [], []
    for step, (x, y) in enumerate(batches):
        lr = start_lr * 10 ** (step / steps_per_decade)
        optimizer.param_groups[0]["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        lrs.append(lr)
        losses.append(loss.item())
        if losses[-1] > stop_factor * min(losses):
            return lrs, losses, lrs[losses.index(min(losses))]
    return lrs, losses, math.nan
