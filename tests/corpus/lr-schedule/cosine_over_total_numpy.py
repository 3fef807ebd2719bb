# expect: failed pitfall=cosine-over-total
# source: independent mistake: numpy with np.clip on the progress, but the progress is divided by total_steps
import numpy as np


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return float(np.divide(step, warmup_steps))
    progress = np.clip((step - warmup_steps) / total_steps, 0.0, 1.0)
    return float(min_ratio + (1.0 - min_ratio) * (np.cos(np.pi * progress) + 1.0) / 2.0)
