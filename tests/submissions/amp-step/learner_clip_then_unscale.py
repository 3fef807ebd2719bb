# expect: failed pitfall=clip-scaled-grads
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    for i in range(0, len(microbatches), accum_steps):
        optimizer.zero_grad()
        for x, y in microbatches[i:i + accum_steps]:
            scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.unscale_(optimizer)
        old = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        if scaler.get_scale() >= old:
            scheduler.step()
