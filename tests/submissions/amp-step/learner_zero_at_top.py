# expect: failed pitfall=zero-grad-every-microbatch
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    for step, (x, y) in enumerate(microbatches):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y) / accum_steps
        scaler.scale(loss).backward()
        if (step + 1) % accum_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scale = scaler.get_scale()
            scaler.step(optimizer)
            scaler.update()
            if scaler.get_scale() >= scale:
                scheduler.step()
