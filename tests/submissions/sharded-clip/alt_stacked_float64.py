# expect: passed
# An empty shard contributes 0 (default=0.0 for the inf-norm).
# Accumulates in float64 Python floats, one all_reduce of a float64 tensor; out-of-place grads.
import math

import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [p for p in parameters if p.grad is not None]
    p = float(norm_type)
    if math.isinf(p):
        mine = max((float(q.grad.abs().max()) for q in params if q.grad.numel()), default=0.0)
        value = torch.tensor(mine, dtype=torch.float64)
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        total = float(value)
    else:
        mine = sum(float((q.grad.double().abs() ** p).sum()) for q in params)
        value = torch.tensor(mine, dtype=torch.float64)
        dist.all_reduce(value)
        total = float(value) ** (1.0 / p)
    coef = min(1.0, max_norm / (total + 1e-6))
    for q in params:
        q.grad = q.grad * coef
    return total
