# expect: passed
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if norm_type == float("inf"):
        total = max(g.abs().max() for g in grads)
    else:
        total = sum((g.abs() ** norm_type).sum() for g in grads) ** (1.0 / norm_type)
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g.mul_(coef)
    return total
