# expect: failed pitfall=suggest-at-minimum
# source: the "pick the bottom of the curve" reading of the plot: suggestion = the lr of the lowest recorded loss (min over zip)
import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    curve = []
    for step, (x, y) in enumerate(batches):
        lr = start_lr * 10 ** (step / steps_per_decade)
        for g in optimizer.param_groups:
            g["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        curve.append((lr, loss.item()))
        if curve[-1][1] > stop_factor * min(l for _, l in curve):
            best_lr, _ = min(curve, key=lambda point: point[1])
            return [c[0] for c in curve], [c[1] for c in curve], best_lr
    return [c[0] for c in curve], [c[1] for c in curve], math.nan
