# expect: failed pitfall=floor-by-clamping
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return max(min_ratio, 0.5 * (1 + math.cos(math.pi * progress)))
