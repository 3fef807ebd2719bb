# expect: passed
"""Counts real updates by wrapping optimizer.step (the scaler calls it only when it does not
skip), and clips by hand: one norm over every gradient, coefficient max_norm / (norm + 1e-6),
never above 1. model.zero_grad() after each update."""
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    taken = [0]
    inner_step = optimizer.step

    def counting_step(*args, **kwargs):
        taken[0] += 1
        return inner_step(*args, **kwargs)

    optimizer.step = counting_step
    try:
        for index, (x, y) in enumerate(microbatches, start=1):
            scaler.scale(loss_fn(model(x), y).div(accum_steps)).backward()
            if index % accum_steps:
                continue
            scaler.unscale_(optimizer)
            grads = [p.grad for p in model.parameters() if p.grad is not None]
            norm = torch.sqrt(sum((g.double() ** 2).sum() for g in grads)).float()
            factor = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
            with torch.no_grad():
                for g in grads:
                    g.mul_(factor)
            before = taken[0]
            scaler.step(optimizer)
            scaler.update()
            if taken[0] > before:
                scheduler.step()
            model.zero_grad()
    finally:
        optimizer.step = inner_step
