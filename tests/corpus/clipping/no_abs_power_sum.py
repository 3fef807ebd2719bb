# expect: failed pitfall=no-abs
# source: independent mistake: the L2 formula generalised as (sum g**p)**(1/p) and max(g) for inf, with no absolute values
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    p = float(norm_type)
    if p == float("inf"):
        total = torch.stack([g.max() for g in grads]).max()
    else:
        total = torch.stack([(g ** p).sum() for g in grads]).sum() ** (1.0 / p)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total
