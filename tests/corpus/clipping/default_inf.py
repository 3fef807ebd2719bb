# expect: failed pitfall=default-norm-type
# source: independent mistake: signature written as norm_type=float("inf"), otherwise correct
import math

import torch


def clip_grad_norm_(parameters, max_norm, norm_type=float("inf")):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    p = float(norm_type)
    if math.isinf(p):
        total = torch.stack([g.abs().max() for g in grads]).max()
    else:
        total = torch.stack([g.abs().pow(p).sum() for g in grads]).sum().pow(1 / p)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total
