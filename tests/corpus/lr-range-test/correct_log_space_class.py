# expect: passed
# source: independent answer: a small class holding the curve, the lr computed in log space (exp of a line in ln lr), the running best kept as it goes
import math


class _Sweep:
    def __init__(self, start_lr, steps_per_decade):
        self.log_start = math.log(start_lr)
        self.slope = math.log(10.0) / steps_per_decade
        self.lrs, self.losses, self.best = [], [], math.inf

    def lr(self, step):
        return math.exp(self.log_start + self.slope * step)

    def add(self, lr, loss):
        self.lrs.append(lr)
        self.losses.append(loss)
        self.best = min(self.best, loss)


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    sweep = _Sweep(start_lr, steps_per_decade)
    step = 0
    for x, y in batches:
        lr = sweep.lr(step)
        for group in optimizer.param_groups:
            group.update(lr=lr)
        optimizer.zero_grad()
        out = loss_fn(model(x), y)
        out.backward()
        optimizer.step()
        sweep.add(lr, float(out.detach()))
        if sweep.losses[-1] > stop_factor * sweep.best:
            return sweep.lrs, sweep.losses, lr / 10.0
        step += 1
    return sweep.lrs, sweep.losses, float("nan")
