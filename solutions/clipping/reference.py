"""Reference: global-norm gradient clipping, matching torch.nn.utils.clip_grad_norm_."""

import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]  # list(): a generator is read once
    norm_type = float(norm_type)
    if not grads:
        return torch.tensor(0.0)
    per_tensor = [torch.linalg.vector_norm(g, norm_type) for g in grads]
    # The norm of the per-tensor norms is the norm of everything concatenated, for any p and inf.
    total = torch.linalg.vector_norm(torch.stack(per_tensor), norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))
    return total
