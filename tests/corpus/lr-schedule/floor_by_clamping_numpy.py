# expect: failed pitfall=floor-by-clamping
# source: independent mistake: numpy maximum() puts the floor under a cosine that still runs from 1 to 0
import numpy as np


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return float(np.maximum(min_ratio, 0.5 * (1.0 + np.cos(np.pi * progress))))
