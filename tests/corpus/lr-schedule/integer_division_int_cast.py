# expect: failed pitfall=integer-division
# source: independent mistake: the warmup fraction passed through int(), which floors it to 0 on every warmup step
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return int(step / warmup_steps)
    progress = min((step - warmup_steps) / (total_steps - warmup_steps), 1)
    return min_ratio + (1 - min_ratio) * (1 + math.cos(math.pi * progress)) / 2
