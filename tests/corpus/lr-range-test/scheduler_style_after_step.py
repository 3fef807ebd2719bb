# expect: failed pitfall=lr-set-after-step
# source: the scheduler habit "step, then update the lr" applied by hand, without setting start_lr first: the first step runs at the optimizer's own lr
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses = [], []
    for step, (x, y) in enumerate(batches):
        lr = start_lr * 10 ** (step / steps_per_decade)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        for g in optimizer.param_groups:  # "schedule" for the next step
            g["lr"] = lr
        lrs.append(lr)
        losses.append(loss.item())
        if losses[-1] > stop_factor * min(losses):
            return lrs, losses, lr / 10
    return lrs, losses, math.nan
