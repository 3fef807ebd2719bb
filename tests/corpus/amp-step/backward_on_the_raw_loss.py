# expect: failed pitfall=backward-not-scaled
# source: independent mistake: the GradScaler calls copied into an fp32 accumulation loop (unscale_, step, update), but the backward left as plain loss.backward(), so nothing was ever scaled
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    optimizer.zero_grad()
    for index, (inputs, targets) in enumerate(microbatches, start=1):
        loss = loss_fn(model(inputs), targets) / accum_steps
        loss.backward()
        if index % accum_steps != 0:
            continue
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scale_before = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        if scaler.get_scale() >= scale_before:
            scheduler.step()
        optimizer.zero_grad()
