# expect: failed pitfall=scheduler-every-microbatch
# source: a per-batch scheduler left at the end of the dataloader loop, outside the accumulation branch
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(microbatches):
        scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        scheduler.step()
