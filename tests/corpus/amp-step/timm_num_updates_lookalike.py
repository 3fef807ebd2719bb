# expect: failed pitfall=scheduler-on-skipped-step
# source: look-alike of timm's train.py with its NativeScaler: __call__(loss, optimizer, clip_grad, parameters, need_update) unscales, clips and steps on the last microbatch; num_updates counts every update attempt and lr_scheduler.step_update follows it
import torch


class NativeScalerLike:
    def __init__(self, scaler):
        self._scaler = scaler

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, need_update=True):
        self._scaler.scale(loss).backward()
        if need_update:
            if clip_grad is not None:
                self._scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(parameters, clip_grad)
            self._scaler.step(optimizer)
            self._scaler.update()


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    loss_scaler = NativeScalerLike(scaler)
    num_updates = 0
    for batch_idx, (x, y) in enumerate(microbatches):
        need_update = (batch_idx + 1) % accum_steps == 0
        loss = loss_fn(model(x), y) / accum_steps
        loss_scaler(loss, optimizer, clip_grad=max_norm, parameters=list(model.parameters()),
                    need_update=need_update)
        if not need_update:
            continue
        num_updates += 1
        optimizer.zero_grad()
        while scheduler.last_epoch < num_updates:   # step_update(num_updates)
            scheduler.step()
