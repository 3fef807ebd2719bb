# expect: failed pitfall=nan-on-zero
# source: independent mistake: coefficient written as min(total, max_norm) / total with tensors, 0/0 on all-zero gradients
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads]).double(), float(norm_type))
    scale = torch.minimum(total, torch.tensor(float(max_norm), dtype=total.dtype)) / total
    for g in grads:
        g.mul_(scale)
    return total
