import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    # wrong on purpose: each tensor clipped by its own norm
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norms = []
    for g in grads:
        n = g.norm(norm_type)
        norms.append(n)
        coef = max_norm / (n + 1e-6)
        if coef < 1:
            g.mul_(coef)
    return torch.stack(norms).norm(norm_type)
