# expect: failed pitfall=integer-division+progress-not-clamped
# source: independent mistake pair: step // warmup_steps in the warmup and no clamp on the progress
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step // warmup_steps
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))
