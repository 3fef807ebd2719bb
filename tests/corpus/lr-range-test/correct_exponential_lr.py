# expect: passed
# source: independent answer: torch.optim.lr_scheduler.ExponentialLR with gamma = 10 ** (1 / steps_per_decade), the lr read with get_last_lr(), itertools.count for the step
import itertools
import math

from torch.optim.lr_scheduler import ExponentialLR


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    for group in optimizer.param_groups:
        group["lr"] = start_lr
    scheduler = ExponentialLR(optimizer, gamma=10 ** (1 / steps_per_decade))
    history = []
    for _, (inputs, targets) in zip(itertools.count(), batches):
        lr = scheduler.get_last_lr()[0]
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        scheduler.step()
        history.append((lr, loss.item()))
        lowest = min(l for _, l in history)
        if history[-1][1] > stop_factor * lowest:
            break
    else:
        return [h[0] for h in history], [h[1] for h in history], math.nan
    return [h[0] for h in history], [h[1] for h in history], history[-1][0] / 10
