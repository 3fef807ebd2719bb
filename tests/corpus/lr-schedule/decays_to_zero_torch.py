# expect: failed pitfall=decays-to-zero
# source: independent mistake: torch scalars, clamped progress, but the floor is never mixed in (min_ratio unused)
import torch


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    p = torch.tensor((step - warmup_steps) / (total_steps - warmup_steps), dtype=torch.float64).clamp(0, 1)
    return float(0.5 * (1 + torch.cos(torch.pi * p)))
