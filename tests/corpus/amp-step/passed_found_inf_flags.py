# expect: passed
# source: skip detection from GradScaler's own per-device inf/NaN flags (the private _found_inf_per_device that several training codebases read), checked right after unscale_
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    groups = [microbatches[i:i + accum_steps] for i in range(0, len(microbatches), accum_steps)]
    for group in groups:
        for x, y in group:
            scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        scaler.unscale_(optimizer)
        found = scaler._found_inf_per_device(optimizer)
        overflow = any(bool(flag.item()) for flag in found.values())
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        if not overflow:
            scheduler.step()
        optimizer.zero_grad()
