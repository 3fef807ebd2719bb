# expect: failed
# source: hostile review of issue 14: the correct loop, except that the last group's scaler.update() is left out (the scaler then refuses the next call's unscale_, and a last-group overflow never backs the scale off); caught by the scale after the loop
import torch, sys, os, threading

def _loop(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm, final_update=True):
    optimizer.zero_grad()
    n = len(microbatches)
    for i, (x, y) in enumerate(microbatches):
        loss = loss_fn(model(x), y) / accum_steps
        scaler.scale(loss).backward()
        if (i + 1) % accum_steps != 0:
            continue
        scaler.unscale_(optimizer)
        finite = all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        if final_update or i + 1 < n:
            scaler.update()
        if finite:
            scheduler.step()
        optimizer.zero_grad()

def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    _loop(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm, final_update=False)
