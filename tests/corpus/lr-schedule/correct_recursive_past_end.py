# expect: passed
# source: independent answer: steps past the end recurse onto total_steps; the cosine written with sin, 1 - sin^2(x/2)
from math import pi, sin


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step > total_steps:
        return lr_multiplier(total_steps, warmup_steps, total_steps, min_ratio)
    if step < warmup_steps:
        return step / warmup_steps
    x = pi * (step - warmup_steps) / (total_steps - warmup_steps)
    return 1.0 - (1.0 - min_ratio) * sin(x / 2.0) ** 2
