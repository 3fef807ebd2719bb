# expect: failed pitfall=cosine-over-total-cut
# source: independent mistake: an explicit "at or past the end: floor" branch (>=) first, then a decay ratio divided by total_steps instead of the decay length
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    if step >= total_steps:
        return min_ratio
    ratio = (step - warmup_steps) / total_steps
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * ratio))
