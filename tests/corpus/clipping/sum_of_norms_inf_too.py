# expect: failed pitfall=sum-of-norms
# source: independent mistake: per-tensor norms added up with sum() for every norm_type, inf included
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if torch.is_tensor(parameters) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = sum(torch.linalg.vector_norm(g, float(norm_type)) for g in grads)
    coef = min(1.0, max_norm / (float(total) + 1e-6))
    for g in grads:
        g.mul_(coef)
    return total
