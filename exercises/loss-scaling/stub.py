"""Dynamic loss scaling. Run `grind run loss-scaling` to check your answer."""

import torch


class LossScaler:
    """Dynamic loss scaling with the behaviour of torch.amp.GradScaler.

    Used once per iteration, in this order:
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)   # optional, e.g. to clip the true gradients
        scaler.step(optimizer)
        scaler.update()
    """

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        """Start at scale init_scale, with no clean steps counted yet."""
        raise NotImplementedError("write LossScaler.__init__")

    def scale(self, loss):
        """Return loss multiplied by the current scale (loss is a float32 tensor of any shape)."""
        raise NotImplementedError("write LossScaler.scale")

    def unscale_(self, optimizer):
        """Divide, in place, the .grad of every parameter in every optimizer.param_groups[i]["params"]
        by the current scale (skip parameters whose .grad is None), even after a non-finite
        value has turned up.

        Return True if any gradient holds inf, -inf or NaN, else False (a bool, or a bool tensor).
        """
        raise NotImplementedError("write LossScaler.unscale_")

    def step(self, optimizer):
        """Unscale first if unscale_ was not called since the last update(); then call
        optimizer.step() unless the gradients held inf/NaN. The return value is not checked."""
        raise NotImplementedError("write LossScaler.step")

    def update(self):
        """After an overflow: scale *= backoff_factor and the clean-step count restarts at 0.
        After a clean step: count it; when the count reaches growth_interval,
        scale *= growth_factor and the count restarts at 0."""
        raise NotImplementedError("write LossScaler.update")

    def get_scale(self):
        """Return the current scale as a Python float."""
        raise NotImplementedError("write LossScaler.get_scale")
