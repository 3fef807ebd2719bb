# expect: failed pitfall=hf-cosine-lr-rate
# source: look-alike of transformers' get_cosine_with_min_lr_schedule_with_warmup_lr_rate lambda (warmup_lr_rate=None): (step + 1) / warmup, progress (step - warmup + 1) / (total - warmup), min_lr_rate floor, no clamp
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    current = float(step)
    warm = float(warmup_steps)
    if current < warm:
        return (current + 1.0) / max(1.0, warm)
    progress = (current - warm + 1.0) / max(1.0, float(total_steps) - warm)
    factor = 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress))
    factor = factor * (1 - min_ratio) + min_ratio
    return max(0, factor)
