# expect: failed pitfall=clip-scaled-grads
# source: the seed's first pitfall written as a helper that clips "the gradients" and leaves unscaling to scaler.step, which does it after the clip
import torch


def clip_and_step(model, optimizer, scaler, max_norm):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    before = scaler.get_scale()
    scaler.step(optimizer)       # unscales here, after the clip
    scaler.update()
    return scaler.get_scale() >= before


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(microbatches):
        scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0:
            if clip_and_step(model, optimizer, scaler, max_norm):
                scheduler.step()
            optimizer.zero_grad()
