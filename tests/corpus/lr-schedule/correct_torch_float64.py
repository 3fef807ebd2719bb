# expect: passed
# source: independent answer: torch float64 tensors, progress clamped with torch.clamp, returned with .item()
import torch


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    s = torch.tensor(step, dtype=torch.float64)
    if step < warmup_steps:
        return (s / warmup_steps).item()
    progress = torch.clamp((s - warmup_steps) / (total_steps - warmup_steps), max=1.0)
    cosine = (1 + torch.cos(torch.pi * progress)) / 2
    return torch.lerp(torch.tensor(min_ratio, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64),
                      cosine).item()
