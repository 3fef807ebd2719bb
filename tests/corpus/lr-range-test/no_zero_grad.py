# expect: failed pitfall=gradients-never-cleared
# source: a loop written from the forward/backward/step mantra that forgets zero_grad
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses = [], []
    for step, (x, y) in enumerate(batches):
        lr = start_lr * 10 ** (step / steps_per_decade)
        for g in optimizer.param_groups:
            g["lr"] = lr
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        lrs.append(lr)
        losses.append(loss.item())
        if losses[-1] > stop_factor * min(losses):
            return lrs, losses, lr / 10
    return lrs, losses, math.nan
