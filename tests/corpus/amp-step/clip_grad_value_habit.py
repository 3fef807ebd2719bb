# expect: failed pitfall=clip-by-value
# source: independent mistake: "clip the gradients to max_norm" read as clip_grad_value_, the element-wise clip that sits beside clip_grad_norm_ in torch.nn.utils
from torch.nn.utils import clip_grad_value_


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    pending = 0
    for x, y in microbatches:
        out = model(x)
        scaler.scale(loss_fn(out, y) / accum_steps).backward()
        pending += 1
        if pending < accum_steps:
            continue
        pending = 0
        scaler.unscale_(optimizer)
        clip_grad_value_(model.parameters(), clip_value=max_norm)
        s0 = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        skipped = scaler.get_scale() < s0
        if not skipped:
            scheduler.step()
        optimizer.zero_grad()
