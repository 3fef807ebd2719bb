# expect: failed pitfall=per-tensor
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    params = [p for p in parameters if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack([p.grad.norm(norm_type) for p in params]), norm_type)
    for p in params:
        n = p.grad.norm(norm_type)
        if n > max_norm:
            p.grad.mul_(max_norm / (n + 1e-6))
    return total
