# expect: failed pitfall=scheduler-on-skipped-step
# source: look-alike of PyTorch Lightning's automatic optimisation with native AMP (issue #16228): the optimizer step closure goes through the scaler, and the lr scheduler is stepped after every accumulation boundary whether or not the scaler skipped
import torch


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    def optimizer_step():
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()

    for batch_idx, (x, y) in enumerate(microbatches):
        loss = loss_fn(model(x), y) / accum_steps
        scaler.scale(loss).backward()
        if (batch_idx + 1) % accum_steps == 0:
            optimizer_step()
            optimizer.zero_grad()
            scheduler.step()   # update_lr_schedulers("step"): no check that the optimizer ran
