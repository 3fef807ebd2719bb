"""Reference: the LR range test, as the course runs it.

One short training run whose learning rate grows by a constant factor every step (10x every
`steps_per_decade` steps), recording the loss at each learning rate, and stopping as soon as the
loss has blown up to `stop_factor` times the best loss seen so far. The learning rate to train
with is then taken an order of magnitude below the one where that happened."""

import math


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    lrs, losses = [], []
    for step, (x, y) in enumerate(batches):  # an iterator: read once, in order, never indexed
        # Exponential growth: step 0 runs at start_lr exactly, step 50 at 10 * start_lr, ...
        lr = start_lr * 10 ** (step / steps_per_decade)
        # Every group: an optimizer with separate groups (no decay on biases, say) would
        # otherwise keep training part of the model at its old learning rate.
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        lrs.append(lr)
        losses.append(loss.item())
        # The stop rule compares with the best loss so far (this one included), not with the
        # previous loss: a curve that creeps up step by step must stop too.
        if losses[-1] > stop_factor * min(losses):
            # The divergence point is recorded on the curve; train an order of magnitude below it.
            return lrs, losses, lr / 10
    # The batches ran out before the loss diverged: there is no divergence point to go by.
    return lrs, losses, math.nan
