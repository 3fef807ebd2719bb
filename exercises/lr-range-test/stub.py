"""The LR range test. Run `grind run lr-range-test` to check your answer."""

import math  # noqa: F401  (math.nan when the loss never diverges)

import torch  # noqa: F401


def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
    """Sweep the learning rate upward exponentially while training, and suggest one to train with.

    model, loss_fn: loss_fn(model(x), y) is a scalar tensor to backpropagate.
    batches:        an iterator of (x, y) minibatches: one step per minibatch, in order, read once.
    optimizer:      a torch optimizer over model's parameters, possibly with several param groups.
    start_lr, steps_per_decade: step 0 runs at start_lr; the lr grows geometrically, ten times
                    larger every steps_per_decade steps, on every param group.
    stop_factor:    stop after the first step whose loss exceeds stop_factor times the smallest
                    loss recorded so far.

    Returns (lrs, losses, suggested_lr): the lr and the loss (a float) of every step taken, the
    diverging step included, and the lr of that step divided by 10 (math.nan if the batches ran
    out before the loss diverged).
    """
    raise NotImplementedError("write lr_range_test")
