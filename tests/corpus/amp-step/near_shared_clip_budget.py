# expect: failed
# source: near miss, no known mistake: each tensor clipped on its own, but to a share of the budget (max_norm / sqrt(number of tensors), "so the total stays under max_norm"); per-tensor clipping to max_norm itself is the known mistake and must not be named
import math
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    params = [p for p in model.parameters()]
    share = max_norm / math.sqrt(len(params))
    for i, (x, y) in enumerate(microbatches):
        scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps:
            continue
        scaler.unscale_(optimizer)
        for p in params:
            if p.grad is not None:
                torch.nn.utils.clip_grad_norm_([p], share)
        before = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        if scaler.get_scale() >= before:
            scheduler.step()
        optimizer.zero_grad()
