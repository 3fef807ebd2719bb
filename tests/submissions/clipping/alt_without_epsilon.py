# expect: passed
# No 1e-6: fine within tolerance, as long as all-zero gradients do not produce NaN.
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norms = torch.stack([g.norm(norm_type) for g in grads])
    total = norms.norm(norm_type)
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / total)
    return total
