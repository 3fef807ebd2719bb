# expect: failed pitfall=optimizer-step-bypasses-scaler
# source: a loop that unscales and clips, then calls optimizer.step() itself ("the scaler already unscaled, so a plain step is enough") and guards only the scheduler with the gradient norm
import math

import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    for g in range(len(microbatches) // accum_steps):
        optimizer.zero_grad()
        for x, y in microbatches[g * accum_steps:(g + 1) * accum_steps]:
            scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        scaler.unscale_(optimizer)
        norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm))
        optimizer.step()
        scaler.update()
        if math.isfinite(norm):
            scheduler.step()
