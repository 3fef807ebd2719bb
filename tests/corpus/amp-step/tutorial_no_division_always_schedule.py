# expect: failed pitfall=loss-not-divided+scheduler-on-skipped-step
# source: a tutorial AMP loop with accumulation bolted on: the loss is not divided by the accumulation steps and the scheduler steps after every boundary
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    for i, (x, y) in enumerate(microbatches):
        output = model(x)
        loss = loss_fn(output, y)
        scaler.scale(loss).backward()
        if (i + 1) % accum_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            optimizer.zero_grad()
