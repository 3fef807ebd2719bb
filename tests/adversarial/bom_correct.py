# expect: passed
# A correct answer saved with a UTF-8 byte order mark (as some Windows editors do).
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    # the norm over every gradient at once, then one scale for all
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    p = float(norm_type)
    if p == float("inf"):
        total = max(g.detach().abs().max() for g in grads)
    else:
        total = torch.stack([torch.linalg.vector_norm(g.detach(), p) for g in grads]).norm(p)
    scale = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(scale.to(g.dtype))
    return total
