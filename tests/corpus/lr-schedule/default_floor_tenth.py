# expect: failed pitfall=default-min-ratio
# source: independent mistake: a schedule helper copied with its usual default floor, min_ratio=0.1, otherwise correct (max(1, ...) guards kept)
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.1):
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    progress = min(1.0, max(0.0, progress))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
