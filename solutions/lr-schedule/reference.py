"""Reference: linear warmup, then cosine decay to a floor, as a LambdaLR multiplier.

Pure Python: a schedule is a function of an integer, there is nothing to vectorise.
"""

import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    # Warmup: a straight line from 0 (step 0) towards 1 (step == warmup_steps).
    # The strict < means warmup_steps == 0 never reaches the division.
    if step < warmup_steps:
        return step / warmup_steps
    # Decay: progress runs from 0 at the peak to 1 at total_steps, over the decay's own length,
    # and is clamped so that every step past total_steps stays on the floor.
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    cosine = 0.5 * (1.0 + math.cos(math.pi * progress))  # 1 -> 0
    return min_ratio + (1.0 - min_ratio) * cosine  # rescaled to 1 -> min_ratio
