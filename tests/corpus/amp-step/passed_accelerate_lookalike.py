# expect: passed
# source: look-alike of HF accelerate: an optimizer wrapper records step_was_skipped (the scale went down across step and update) and a scheduler wrapper does nothing when the step was skipped
import torch


class _WrappedOptimizer:
    def __init__(self, optimizer, scaler):
        self.optimizer, self.scaler, self.step_was_skipped = optimizer, scaler, False

    def step(self):
        before = self.scaler.get_scale()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.step_was_skipped = self.scaler.get_scale() < before

    def zero_grad(self):
        self.optimizer.zero_grad()


class _WrappedScheduler:
    def __init__(self, scheduler, optimizer):
        self.scheduler, self.optimizer = scheduler, optimizer

    def step(self):
        if not self.optimizer.step_was_skipped:
            self.scheduler.step()


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    opt = _WrappedOptimizer(optimizer, scaler)
    sched = _WrappedScheduler(scheduler, opt)
    for n, (x, y) in enumerate(microbatches, 1):
        scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        sync_gradients = n % accum_steps == 0
        if sync_gradients:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            opt.step()
            sched.step()
            opt.zero_grad()
