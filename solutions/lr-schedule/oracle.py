"""Oracle: the decay is PyTorch's own CosineAnnealingLR, the warmup a float64 torch division.

CosineAnnealingLR with base lr 1, T_max = total_steps - warmup_steps and eta_min = min_ratio is
stepped T_max times on a throwaway optimizer, and its learning rates are the multipliers of the
decay phase; past T_max the last one (eta_min) is held. The case code then drives this function
through LambdaLR exactly as it drives the learner's.
"""

import torch
from torch.optim.lr_scheduler import CosineAnnealingLR

_tables = {}


def _decay_table(warmup_steps, total_steps, min_ratio):
    key = (warmup_steps, total_steps, float(min_ratio))
    if key not in _tables:
        length = total_steps - warmup_steps
        param = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
        opt = torch.optim.SGD([param], lr=1.0)
        sched = CosineAnnealingLR(opt, T_max=length, eta_min=float(min_ratio))
        values = [opt.param_groups[0]["lr"]]
        for _ in range(length):
            opt.step()
            sched.step()
            values.append(opt.param_groups[0]["lr"])
        _tables[key] = torch.tensor(values, dtype=torch.float64)
    return _tables[key]


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return (torch.tensor(step, dtype=torch.float64) / warmup_steps).item()
    table = _decay_table(warmup_steps, total_steps, min_ratio)
    return table[min(step - warmup_steps, len(table) - 1)].item()
