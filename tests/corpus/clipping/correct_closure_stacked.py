# expect: passed
# source: independent answer: a closure factory per norm type, stacked per-tensor norms, grads reassigned out of place
import torch


def _norm_fn(p):
    if p == float("inf"):
        return lambda t: t.abs().max()
    return lambda t: t.abs().pow(p).sum().pow(1.0 / p)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    p = float(norm_type)
    norm = _norm_fn(p)
    params = list(parameters) if not torch.is_tensor(parameters) else [parameters]
    params = [q for q in params if q.grad is not None]
    per = torch.stack([norm(q.grad.double().reshape(-1)) for q in params])
    total = norm(per)
    clip = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for q in params:
        q.grad = (q.grad * clip).to(q.grad.dtype)
    return total.float()
