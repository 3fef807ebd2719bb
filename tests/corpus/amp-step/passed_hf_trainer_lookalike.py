# expect: passed
# source: look-alike of the HF transformers Trainer's AMP path: clip after unscale_, then optimizer_was_run = scale_before <= scale_after decides whether the lr scheduler steps
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    steps_in_epoch = len(microbatches)
    for step, (inputs, labels) in enumerate(microbatches):
        tr_loss = loss_fn(model(inputs), labels)
        tr_loss = tr_loss / accum_steps
        scaler.scale(tr_loss).backward()
        if (step + 1) % accum_steps == 0 or step + 1 == steps_in_epoch:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scale_before = scaler.get_scale()
            scaler.step(optimizer)
            scaler.update()
            scale_after = scaler.get_scale()
            optimizer_was_run = scale_before <= scale_after
            if optimizer_was_run:
                scheduler.step()
            model.zero_grad()
