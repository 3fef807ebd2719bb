# expect: failed pitfall=new-tensors+norm-after-clipping
# source: independent mistake pair: clipped copies are built (never written to .grad) and the norm of the copies is returned
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    p = float(norm_type)
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, p) for g in grads]), p)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    clipped = [g * coef for g in grads]
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(c, p) for c in clipped]), p)
