# expect: failed pitfall=first-group-only
# source: the common one-group snippet optimizer.param_groups[0]["lr"] = lr, written for a single-group optimizer and reused here
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses, best = [], [], math.inf
    for step, (x, y) in enumerate(batches):
        lr = start_lr * 10 ** (step / steps_per_decade)
        optimizer.param_groups[0]["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        lrs.append(lr)
        losses.append(loss.item())
        best = min(best, loss.item())
        if loss.item() > stop_factor * best:
            return lrs, losses, lr / 10
    return lrs, losses, math.nan
