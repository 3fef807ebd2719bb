# expect: failed
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    return [float(p.grad.norm()) for p in params if p.grad is not None]
