# expect: failed pitfall=forgot-update
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    optimizer.zero_grad()
    for step, (x, y) in enumerate(microbatches):
        scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        if (step + 1) % accum_steps == 0:
            scaler.unscale_(optimizer)
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            if torch.isfinite(norm):
                scheduler.step()
            optimizer.zero_grad()
