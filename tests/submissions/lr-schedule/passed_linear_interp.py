# expect: passed
# Float64 numpy; the floor is written as an interpolation between max and min multipliers.
import numpy as np


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    step = np.float64(step)
    if step < warmup_steps:
        return step / warmup_steps
    t = np.clip((step - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    weight = (np.cos(np.pi * t) + 1.0) / 2.0  # 1 at the peak, 0 at the end
    return weight * 1.0 + (1.0 - weight) * min_ratio
