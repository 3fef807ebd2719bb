# expect: passed
# source: independent answer: whether the update happened is read from the clip's own return value (an overflowing group has a non-finite unscaled norm, exactly when scaler.step skips), a guard several training scripts use
import math
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    it = iter(microbatches)
    for _ in range(len(microbatches) // accum_steps):
        for _ in range(accum_steps):
            x, y = next(it)
            loss = loss_fn(model(x), y).div(accum_steps)
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        if math.isfinite(norm.item()):
            scheduler.step()
        optimizer.zero_grad()
