# expect: failed pitfall=reads-past-the-stop
# Right curve and suggestion, but the loop prefetches the next minibatch before testing the stop
# rule, so it takes one more from the caller's iterator than the test used ("minibatches read").
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses = [], []
    upcoming = next(batches, None)
    step = 0
    while upcoming is not None:
        x, y = upcoming
        lr = start_lr * 10 ** (step / steps_per_decade)
        for g in optimizer.param_groups:
            g["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        lrs.append(lr)
        losses.append(loss.item())
        upcoming = next(batches, None)  # prefetch
        if losses[-1] > stop_factor * min(losses):
            return lrs, losses, lr / 10
        step += 1
    return lrs, losses, math.nan
