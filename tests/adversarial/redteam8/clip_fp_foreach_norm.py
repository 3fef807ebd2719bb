# false-positive probe (redteam8): clipping, a correct answer written with torch's foreach primitives
# (torch._foreach_norm, torch._foreach_mul_: building blocks, not listed), the way torch's own
# implementation is built. Expected: PASSED at every level. Observed (2026-12-03):
# practice PASSED, poison alone PASSED, full marks PASSED. No false positive.
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return torch.tensor(0.0)
    norms = torch._foreach_norm(grads, norm_type)
    total = torch.linalg.vector_norm(torch.stack(norms), norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    torch._foreach_mul_(grads, coef)
    return total
