# expect: failed pitfall=warmup-off-by-one+decays-to-zero
# source: independent mistake pair: (step + 1) / warmup_steps warmup and a cosine that ignores min_ratio (clamped, so it sits at 0)
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return 0.5 * (1.0 + math.cos(math.pi * progress))
