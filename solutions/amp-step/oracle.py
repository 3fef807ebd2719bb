"""Oracle: the same loop reached another way, leaning on GradScaler's own bookkeeping.

- It never calls unscale_: it clips the gradients while they are still multiplied by S, using
  the clip coefficient of the true gradients (true norm = scaled norm / S, the formula of
  clip_grad_norm_: max_norm / (norm + 1e-6), at most 1). Multiplying by a coefficient commutes
  with dividing by S, so scaler.step, which unscales by itself when nobody did, hands the
  optimizer the same gradients.
- It asks GradScaler itself whether the step was skipped: the per-device inf/NaN flags the
  scaler recorded for this optimizer during step (torch's own verdict, read before update()
  clears them), instead of comparing scales.
- It walks the microbatches group by group and zeroes the gradients before each group.
"""

import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    microbatches = list(microbatches)
    params = [p for p in model.parameters()]
    for start in range(0, len(microbatches), accum_steps):
        optimizer.zero_grad(set_to_none=True)
        for x, y in microbatches[start:start + accum_steps]:
            scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        grads = [p.grad for p in params if p.grad is not None]
        scaled_norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        true_norm = scaled_norm / scaler.get_scale()
        coefficient = torch.clamp(max_norm / (true_norm + 1e-6), max=1.0)
        with torch.no_grad():
            for g in grads:
                g.mul_(coefficient)
        scaler.step(optimizer)
        skipped = sum(float(v.item()) for v in scaler._found_inf_per_device(optimizer).values()) > 0
        scaler.update()
        if not skipped:
            scheduler.step()
