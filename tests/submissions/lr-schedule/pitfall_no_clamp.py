# expect: failed pitfall=progress-not-clamped
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    decay_steps = total_steps - warmup_steps
    cos_out = math.cos(math.pi * (step - warmup_steps) / decay_steps)
    return min_ratio + (1 - min_ratio) * (cos_out + 1) / 2
