# expect: passed
# Branch-free torch version in float32 that returns a 0-d tensor: both branches are evaluated
# and torch.where picks one, so warmup_steps = 0 gives a harmless inf/nan in the unused branch.
import math

import torch


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    s = torch.tensor(float(step))
    warm = s / warmup_steps if warmup_steps else torch.zeros(())
    progress = ((s - warmup_steps) / (total_steps - warmup_steps)).clamp(0.0, 1.0)
    decay = min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + torch.cos(math.pi * progress))
    return torch.where(s < warmup_steps, warm, decay)
