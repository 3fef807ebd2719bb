# expect: passed
# Out of place: builds new tensors and assigns them back to .grad; float64 arithmetic inside.
import math

import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = (parameters,)
    params = [p for p in parameters if p.grad is not None]
    p_ = float(norm_type)
    if math.isinf(p_):
        total = max(float(p.grad.double().abs().max()) for p in params)
    else:
        total = sum(float(p.grad.double().abs().pow(p_).sum()) for p in params) ** (1 / p_)
    coef = min(1.0, max_norm / (total + 1e-6))
    for p in params:
        p.grad = (p.grad.double() * coef).to(p.grad.dtype)
    return total
