# expect: failed pitfall=update-per-microbatch
# source: scaler.update() left at the bottom of the microbatch loop when a non-accumulating AMP loop was extended with an accumulation branch
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    for i, (x, y) in enumerate(microbatches):
        scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        if (i + 1) % accum_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            found = sum(v.item() for v in scaler._found_inf_per_device(optimizer).values())
            scaler.step(optimizer)
            if not found:
                scheduler.step()
            optimizer.zero_grad()
        scaler.update()
