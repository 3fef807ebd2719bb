# expect: failed pitfall=per-tensor-clipping
# source: independent mistake (the one issue 29 found unnamed): the scaler calls in the right order, but the clip is a hand-written loop giving each gradient tensor its own norm and its own factor
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    n_groups = len(microbatches) // accum_steps
    for k in range(n_groups):
        chunk = microbatches[k * accum_steps:(k + 1) * accum_steps]
        for x, y in chunk:
            scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        scaler.unscale_(optimizer)
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is None:
                    continue
                n = p.grad.norm()
                if n > max_norm:
                    p.grad.mul_(max_norm / (n + 1e-6))
        old_scale = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        if not scaler.get_scale() < old_scale:
            scheduler.step()
        optimizer.zero_grad(set_to_none=True)
