# expect: failed pitfall=scheduler-misses-growth
# source: "the step ran if the scale did not change": skip detection written with == instead of >=
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    for start in range(0, len(microbatches), accum_steps):
        for x, y in microbatches[start:start + accum_steps]:
            scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        s = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        if scaler.get_scale() == s:
            scheduler.step()
        optimizer.zero_grad()
