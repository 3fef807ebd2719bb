# expect: failed
# source: independent mistake: an explicit "at or past the end: floor" branch (>=) first, then a decay ratio divided by total_steps instead of the decay length. A near miss of cosine-over-total-cut: that pitfall floors only after total_steps (0.325 at step 12 with warmup 4 of 12), this floors at total_steps, so it must not be named
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    if step >= total_steps:
        return min_ratio
    ratio = (step - warmup_steps) / total_steps
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * ratio))
