# expect: passed
# Vectorised: one concatenated vector for the norm, torch._foreach_mul_ for the scaling.
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if torch.is_tensor(parameters) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    total = torch.linalg.vector_norm(flat, float(norm_type))
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    torch._foreach_mul_(grads, coef.item())
    return total
