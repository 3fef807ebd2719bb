# expect: failed pitfall=update-before-step
# source: independent mistake: "update the scaler, then step" (read as: settle the scale first, then apply), so step() finds a fresh per-optimizer state and unscales the gradients a second time
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    groups = [microbatches[i:i + accum_steps] for i in range(0, len(microbatches), accum_steps)]
    for group in groups:
        for x, y in group:
            scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        previous = scaler.get_scale()
        scaler.update()
        scaler.step(optimizer)
        if scaler.get_scale() >= previous:
            scheduler.step()
        optimizer.zero_grad()
