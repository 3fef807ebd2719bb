# expect: failed pitfall=timm-no-warmup-prefix
# source: look-alike of timm's CosineLRScheduler(t_initial=total, lr_min, warmup_t, warmup_lr_init=0) with the default warmup_prefix=False and cycle_limit=1, stepped per update
import math


class _CosineLike:
    def __init__(self, t_initial, lr_min, warmup_t, warmup_lr_init=0.0, warmup_prefix=False, base=1.0):
        self.t_initial, self.lr_min, self.warmup_t = t_initial, lr_min, warmup_t
        self.warmup_lr_init, self.warmup_prefix, self.base = warmup_lr_init, warmup_prefix, base
        self.warmup_step = (base - warmup_lr_init) / warmup_t if warmup_t else 1.0

    def get(self, t):
        if t < self.warmup_t:
            return self.warmup_lr_init + t * self.warmup_step
        if self.warmup_prefix:
            t = t - self.warmup_t
        cycle = t // self.t_initial
        t_curr = t - cycle * self.t_initial
        if cycle >= 1:  # cycle_limit = 1
            return self.lr_min
        return self.lr_min + 0.5 * (self.base - self.lr_min) * (1 + math.cos(math.pi * t_curr / self.t_initial))


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    return _CosineLike(total_steps, min_ratio, warmup_steps).get(step)
