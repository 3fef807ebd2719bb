# expect: failed pitfall=per-tensor+sum-of-norms
# source: independent mistake pair: each tensor clipped by its own norm, and the returned total is the sum of those norms
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    total = 0.0
    for p in parameters:
        if p.grad is None:
            continue
        n = p.grad.norm(norm_type)
        total = total + n
        coef = max_norm / (n + 1e-6)
        if coef < 1:
            p.grad.mul_(coef)
    return total
