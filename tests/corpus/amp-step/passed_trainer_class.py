# expect: passed
# source: the loop split into a small trainer object, one method per clock (microbatch and update), as training frameworks organise it
import torch


class _AmpAccumulator:
    def __init__(self, model, optimizer, scaler, scheduler, accum_steps, max_norm):
        self.model, self.optimizer, self.scaler = model, optimizer, scaler
        self.scheduler, self.accum_steps, self.max_norm = scheduler, accum_steps, max_norm
        self.pending = 0

    def micro_step(self, loss):
        self.scaler.scale(loss / self.accum_steps).backward()
        self.pending += 1
        if self.pending == self.accum_steps:
            self.pending = 0
            self.update()

    def update(self):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        previous = self.scaler.get_scale()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        skipped = self.scaler.get_scale() < previous
        self.optimizer.zero_grad(set_to_none=True)
        if not skipped:
            self.scheduler.step()


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    trainer = _AmpAccumulator(model, optimizer, scaler, scheduler, accum_steps, max_norm)
    for x, y in microbatches:
        trainer.micro_step(loss_fn(model(x), y))
