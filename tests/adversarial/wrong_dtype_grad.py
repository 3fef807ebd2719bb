# expect: failed
# Replaces .grad with an integer tensor: wrong dtype, and torch refuses the assignment anyway.
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    for p in params:
        if p.grad is not None:
            p.grad = p.grad.to(torch.int64)
    return 0.0
