# expect: failed pitfall=progress-not-clamped
# source: look-alike of transformers' get_cosine_with_min_lr_schedule_with_warmup (min_lr_rate): the floor is right, but the progress is never clamped, so the cosine climbs back after num_training_steps
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0, num_cycles=0.5):
    if step < warmup_steps:
        return float(step) / float(max(1, warmup_steps))
    progress = float(step - warmup_steps) / float(max(1, total_steps - warmup_steps))
    factor = 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress))
    return max(0, factor * (1 - min_ratio) + min_ratio)
