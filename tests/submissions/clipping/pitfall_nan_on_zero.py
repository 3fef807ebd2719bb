# expect: failed pitfall=nan-on-zero
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack([g.norm(norm_type) for g in grads]), norm_type)
    for g in grads:
        g.div_(total).mul_(torch.clamp(total, max=max_norm))
    return total
