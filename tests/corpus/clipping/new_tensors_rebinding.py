# expect: failed pitfall=new-tensors
# source: independent mistake: `g = g * coef` inside the loop rebinds a local name and never touches .grad
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    p = float(norm_type)
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, p) for g in grads]), p)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g = g * coef  # noqa: PLW2901
    return total
