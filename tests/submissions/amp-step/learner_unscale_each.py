# expect: failed pitfall=unscale-per-microbatch
"""Unscales right after every backward, to keep .grad in true units at all times."""
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    optimizer.zero_grad()
    for step, (x, y) in enumerate(microbatches):
        scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        scaler.unscale_(optimizer)
        if (step + 1) % accum_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            before = scaler.get_scale()
            scaler.step(optimizer)
            scaler.update()
            if scaler.get_scale() >= before:
                scheduler.step()
            optimizer.zero_grad()
