# expect: failed pitfall=zero-warmup-division
# source: independent mistake: the warmup factor is computed before the branch, so warmup_steps = 0 divides by zero
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    warm = step / warmup_steps
    if warm < 1:
        return warm
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))
