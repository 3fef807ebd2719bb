# expect: failed pitfall=hysteresis
# source: look-alike of DeepSpeed's DynamicLossScaler.update_scale with delayed_shift=2 (the fp16 config's "hysteresis": 2) and consecutive_hysteresis=False; its one scale_factor split into growth_factor/backoff_factor to fit this signature
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.cur_scale = init_scale
        self.cur_iter = 0
        self.last_overflow_iter = -1
        self.growth_factor, self.backoff_factor = growth_factor, backoff_factor
        self.scale_window = growth_interval
        self.delayed_shift = 2
        self.cur_hysteresis = self.delayed_shift
        self.overflow = None

    @staticmethod
    def _has_inf_or_nan(x):
        s = float(x.float().sum())
        return s in (float("inf"), -float("inf")) or s != s

    def scale(self, loss):
        return loss * self.cur_scale

    def unscale_(self, optimizer):
        overflow = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.data.mul_(1.0 / self.cur_scale)
                    overflow = overflow or self._has_inf_or_nan(p.grad.data)
        self.overflow = overflow
        return overflow

    def step(self, optimizer):
        if self.overflow is None:
            self.unscale_(optimizer)
        if not self.overflow:
            optimizer.step()

    def update(self):
        if self.overflow:
            if self.delayed_shift == 1 or self.cur_hysteresis == 1:
                self.cur_scale = self.cur_scale * self.backoff_factor
            else:
                self.cur_hysteresis -= 1
            self.last_overflow_iter = self.cur_iter
        else:
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                self.cur_hysteresis = self.delayed_shift
                self.cur_scale *= self.growth_factor
        self.cur_iter += 1
        self.overflow = None

    def get_scale(self):
        return float(self.cur_scale)
