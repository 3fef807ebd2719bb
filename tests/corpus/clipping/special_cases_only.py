# expect: failed pitfall=l2-only
# source: independent mistake: only p = 1 and inf are special-cased; every other norm_type falls back to the 2-norm
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if norm_type == float("inf"):
        total = max(g.abs().max() for g in grads)
    elif norm_type == 1:
        total = sum(g.abs().sum() for g in grads)
    else:
        total = torch.sqrt(sum((g * g).sum() for g in grads))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total
