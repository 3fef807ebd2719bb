# expect: failed pitfall=norm-after-clipping
# source: independent mistake: a measure() closure called once to clip and once more for the return value
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    p = float(norm_type)

    def measure():
        return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, p) for g in grads]), p)

    total = measure()
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / (total + 1e-6))
    return measure()
