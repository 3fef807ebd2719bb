# expect: failed pitfall=one-based-steps
# source: independent mistake: the first line converts to "human" update numbers, step += 1, then a correct schedule
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    step += 1  # update 1 is the first one
    if step < warmup_steps:
        return step / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))
