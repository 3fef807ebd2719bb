# expect: passed
# Pure math, written as three explicit phases; the cosine uses the half-angle identity
# 0.5 * (1 + cos x) == cos(x / 2) ** 2.
from math import cos, pi


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if warmup_steps > 0 and step < warmup_steps:
        return float(step) / float(warmup_steps)
    if step >= total_steps:
        return float(min_ratio)
    decay_len = total_steps - warmup_steps
    frac = (step - warmup_steps) / decay_len
    return min_ratio + (1 - min_ratio) * cos(pi * frac / 2) ** 2
