# expect: passed
# source: independent answer: numpy for the schedule and the test (np.power, np.minimum.accumulate), gradients set to None by hand
import numpy as np


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses = [], []
    for i, batch in enumerate(batches):
        x, y = batch
        lr = float(start_lr * np.power(10.0, i / steps_per_decade))
        for pg in optimizer.param_groups:
            pg["lr"] = lr
        for p in model.parameters():
            p.grad = None
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        lrs.append(lr)
        losses.append(loss.item())
        running_min = np.minimum.accumulate(np.array(losses))
        if losses[-1] > stop_factor * running_min[-1]:
            return lrs, losses, lr / 10
    return lrs, losses, float(np.nan)
