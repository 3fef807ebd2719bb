# expect: passed
# source: independent answer: the norm measured in numpy (float64) over one concatenated vector, scaling back in torch
import numpy as np
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if torch.is_tensor(parameters):
        parameters = [parameters]
    with_grad = [p for p in parameters if p.grad is not None]
    if not with_grad:
        return 0.0
    flat = np.concatenate([p.grad.detach().cpu().double().numpy().ravel() for p in with_grad])
    order = np.inf if float(norm_type) == float("inf") else float(norm_type)
    total = float(np.linalg.norm(flat, ord=order))
    factor = max_norm / (total + 1e-6)
    if factor < 1.0:
        for p in with_grad:
            p.grad.mul_(factor)
    return total
