# expect: failed pitfall=sum-of-norms+no-clamp
# source: independent mistake pair: total = sum of per-tensor norms, and the gradients always rescaled by max_norm / total
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    total = torch.zeros((), dtype=torch.float64)
    grads = []
    for p in params:
        if p.grad is not None:
            grads.append(p.grad)
            total = total + p.grad.double().norm(norm_type)
    for g in grads:
        g.mul_(max_norm / (total + 1e-6))
    return total
