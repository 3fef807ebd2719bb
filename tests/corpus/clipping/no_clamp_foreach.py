# expect: failed pitfall=no-clamp
# source: independent mistake: rescales to exactly max_norm every time (normalisation, not clipping), with torch._foreach_mul_
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if torch.is_tensor(parameters) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    flat = torch.cat([g.reshape(-1).double() for g in grads])
    total = torch.linalg.vector_norm(flat, float(norm_type))
    torch._foreach_mul_(grads, float(max_norm / (total + 1e-6)))
    return total
