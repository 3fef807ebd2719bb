# expect: failed pitfall=cosine-over-total-cut
# source: independent mistake: nanoGPT's get_lr shape (warmup, "if it > decay_iters: min", cosine) with step / warmup and a decay ratio divided by the whole run, decay_iters, instead of decay_iters - warmup
import math


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    if step > total_steps:
        return min_ratio
    decay_ratio = (step - warmup_steps) / total_steps
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_ratio + coeff * (1.0 - min_ratio)
