# expect: failed pitfall=hysteresis+single-scale-factor
# source: look-alike of DeepSpeed's DynamicLossScaler as configured by its fp16 section: hysteresis 2 and a single scale_factor (growth_factor here) that multiplies to grow and divides to back off; backoff_factor accepted and unused
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.cur_scale = init_scale
        self.scale_factor = growth_factor
        self.scale_window = growth_interval
        self.cur_iter, self.last_overflow_iter = 0, -1
        self.delayed_shift = self.cur_hysteresis = 2
        self.overflow = None

    def scale(self, loss):
        return loss * self.cur_scale

    def unscale_(self, optimizer):
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        for grad in grads:
            grad.div_(self.cur_scale)
        self.overflow = any(not torch.isfinite(grad).all() for grad in grads)
        return self.overflow

    def step(self, optimizer):
        if self.overflow is None:
            self.unscale_(optimizer)
        if not self.overflow:
            optimizer.step()

    def update(self):
        if self.overflow:
            if self.cur_hysteresis == 1:
                self.cur_scale = self.cur_scale / self.scale_factor
            else:
                self.cur_hysteresis -= 1
            self.last_overflow_iter = self.cur_iter
        elif (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
            self.cur_hysteresis = self.delayed_shift
            self.cur_scale *= self.scale_factor
        self.cur_iter += 1
        self.overflow = None

    def get_scale(self):
        return self.cur_scale
