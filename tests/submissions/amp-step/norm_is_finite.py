# expect: passed
"""Groups built with zip over one iterator, the gradients zeroed in place at the start of each
group, and the skip read from the norm clip_grad_norm_ returns: after unscale_ an inf or NaN
gradient makes the global norm inf or NaN, and that is exactly when scaler.step skips."""
import math

import torch
from torch.nn.utils import clip_grad_norm_


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    stream = iter(microbatches)
    for group in zip(*[stream] * accum_steps):
        optimizer.zero_grad(set_to_none=False)
        for inputs, targets in group:
            scaled = scaler.scale(loss_fn(model(inputs), targets) * (1.0 / accum_steps))
            scaled.backward()
        scaler.unscale_(optimizer)
        total = clip_grad_norm_(model.parameters(), max_norm=max_norm)
        scaler.step(optimizer)
        scaler.update()
        if math.isfinite(total.item()):
            scheduler.step()
