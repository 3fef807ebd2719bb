# expect: failed pitfall=fairseq-cosine
# source: look-alike of fairseq's "cosine" lr scheduler, step_update(num_updates) with lr = min_lr, max_lr = peak, default warmup_init_lr (= lr), lr_shrink 0.1, t_mult 1, period = max_update - warmup_updates
import math


class _FairseqCosine:
    def __init__(self, min_lr, max_lr, warmup_updates, max_update, lr_shrink=0.1):
        self.min_lr, self.max_lr = min_lr, max_lr
        self.warmup_updates = warmup_updates
        self.warmup_init_lr = min_lr  # --warmup-init-lr defaults to --lr
        self.period = max_update - warmup_updates
        self.lr_shrink = lr_shrink
        self.lr_step = (max_lr - self.warmup_init_lr) / warmup_updates if warmup_updates > 0 else 1

    def step_update(self, num_updates):
        if num_updates < self.warmup_updates:
            return self.warmup_init_lr + num_updates * self.lr_step
        curr = num_updates - self.warmup_updates
        i = math.floor(curr / self.period)
        t_curr = curr - self.period * i
        shrink = self.lr_shrink ** i
        lo, hi = self.min_lr * shrink, self.max_lr * shrink
        return lo + 0.5 * (hi - lo) * (1 + math.cos(math.pi * t_curr / self.period))


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    return _FairseqCosine(min_ratio, 1.0, warmup_steps, total_steps).step_update(step)
