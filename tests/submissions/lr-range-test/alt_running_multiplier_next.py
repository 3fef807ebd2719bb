# expect: passed
# A while loop over next(), the lr multiplied by a constant factor each step (not recomputed from the
# step number), gradients zeroed in place, float64 numpy for the bookkeeping.
import numpy as np


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    factor = 10.0 ** (1.0 / steps_per_decade)
    lr = start_lr
    record = np.empty((0, 2))
    while True:
        try:
            x, y = next(batches)
        except StopIteration:
            return list(record[:, 0]), list(record[:, 1]), float("nan")
        for group in optimizer.param_groups:
            group["lr"] = lr
        for p in model.parameters():
            if p.grad is not None:
                p.grad.zero_()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        record = np.vstack([record, [lr, float(loss)]])
        if record[-1, 1] > stop_factor * record[:, 1].min():
            return [float(v) for v in record[:, 0]], [float(v) for v in record[:, 1]], lr / 10
        lr *= factor
