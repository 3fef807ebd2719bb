# expect: failed pitfall=hf-cosine
# source: look-alike of transformers' get_cosine_schedule_with_warmup lambda (num_cycles=0.5): step / max(1, warmup), then max(0, 0.5 * (1 + cos(pi * 2 * num_cycles * progress))), no floor, progress never clamped
import math
from functools import partial


def _lambda(current_step, *, num_warmup_steps, num_training_steps, num_cycles):
    if current_step < num_warmup_steps:
        return float(current_step) / float(max(1, num_warmup_steps))
    progress = float(current_step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    # the HF helper has no min_lr: min_ratio has nowhere to go
    fn = partial(_lambda, num_warmup_steps=warmup_steps, num_training_steps=total_steps, num_cycles=0.5)
    return fn(step)
