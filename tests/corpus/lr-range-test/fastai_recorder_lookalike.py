# expect: failed pitfall=fastai-smoothed-curve
# source: look-alike of fastai's LRFinder + Recorder: AvgSmoothLoss (beta=0.98, val = lerp(loss, val, beta), value = val / (1 - beta**count)) recorded and compared with 4x its best; the sweep itself is the exercise's
import math

import torch


class AvgSmoothLoss:
    def __init__(self, beta=0.98):
        self.beta, self.count, self.val = beta, 0, torch.tensor(0.0, dtype=torch.float64)

    def accumulate(self, loss):
        self.count += 1
        self.val = torch.lerp(loss.detach().to(torch.float64), self.val, self.beta)

    @property
    def value(self):
        return self.val / (1 - self.beta ** self.count)


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    smooth = AvgSmoothLoss()
    best = float("inf")
    lrs, losses = [], []
    for it, (x, y) in enumerate(batches):
        lr = start_lr * 10 ** (it / steps_per_decade)
        for h in optimizer.param_groups:
            h["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        smooth.accumulate(loss)
        value = float(smooth.value)
        lrs.append(lr)
        losses.append(value)
        if value < best:
            best = value
        if value > stop_factor * best:
            return lrs, losses, lr / 10
    return lrs, losses, math.nan
