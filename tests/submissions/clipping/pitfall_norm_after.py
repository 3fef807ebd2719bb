# expect: failed pitfall=norm-after-clipping
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack([g.norm(norm_type) for g in grads]), norm_type)
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / (total + 1e-6))
    return torch.linalg.vector_norm(torch.stack([g.norm(norm_type) for g in grads]), norm_type)
