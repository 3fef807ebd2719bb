# expect: failed pitfall=warmup-off-by-one
# source: independent mistake: a closure builder; the warmup counts the current update as done, (step + 1) / warmup_steps
import math


def _make(warmup_steps, total_steps, min_ratio):
    def warm(step):
        return (step + 1) / warmup_steps

    def decay(step):
        p = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * p))

    return lambda step: warm(step) if step < warmup_steps else decay(step)


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    return _make(warmup_steps, total_steps, min_ratio)(step)
