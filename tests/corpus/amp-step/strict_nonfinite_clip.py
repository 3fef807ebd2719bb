# expect: failed pitfall=clip-raises-on-overflow
# source: independent mistake: error_if_nonfinite=True added to the clip "to catch divergence early", which turns every expected fp16 overflow into a crash before the scaler can skip it
import torch


class Step:
    def __init__(self, optimizer, scaler, scheduler):
        self.opt, self.scaler, self.sched = optimizer, scaler, scheduler

    def __call__(self, params, max_norm):
        self.scaler.unscale_(self.opt)
        torch.nn.utils.clip_grad_norm_(params, max_norm, error_if_nonfinite=True)
        before = self.scaler.get_scale()
        self.scaler.step(self.opt)
        self.scaler.update()
        if self.scaler.get_scale() >= before:
            self.sched.step()
        self.opt.zero_grad()


def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
    apply = Step(optimizer, scaler, scheduler)
    for i, (x, y) in enumerate(microbatches, start=1):
        scaler.scale(loss_fn(model(x), y) / accum_steps).backward()
        if i % accum_steps == 0:
            apply(model.parameters(), max_norm)
