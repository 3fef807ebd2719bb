"""A mixed-precision training step with accumulation. Run `grind run amp-step` to check your answer."""

import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    """Train `model` over `microbatches` with loss scaling, one update per group of accum_steps.

    model:        a torch.nn.Module (float32 parameters; it handles its own precision).
    microbatches: a list of (x, y); its length is a multiple of accum_steps.
    loss_fn:      loss_fn(model(x), y) is the microbatch's mean loss, a scalar tensor.
    optimizer:    built over model.parameters(); use zero_grad() and let the scaler call step().
    scaler:       a torch.amp.GradScaler("cpu"): scale(), unscale_(), step(), update(), get_scale().
    scheduler:    a learning-rate schedule; call scheduler.step() once per update that happened.
    accum_steps:  consecutive microbatches per update.
    max_norm:     clip the true (unscaled) gradients to this global norm before each update.

    Returns nothing.
    """
    raise NotImplementedError("write train_amp")
