# expect: failed pitfall=never-zero-grad
# source: gradients zeroed once before training and never again, as if scaler.step cleared them
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(microbatches):
        scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps:
            continue
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scale = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        if scaler.get_scale() >= scale:
            scheduler.step()
