# expect: failed pitfall=zero-warmup-division
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    warm = min(1.0, step / warmup_steps)
    progress = max(0.0, min(1.0, (step - warmup_steps) / (total_steps - warmup_steps)))
    cosine = min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
    return warm * cosine
