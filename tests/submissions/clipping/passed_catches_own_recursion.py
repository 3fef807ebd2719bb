# expect: passed
# Not a trick: a correct answer that, on every call, probes how deep it may recurse by recursing
# until Python refuses, catching its own RecursionError (while the judge's hook is watching).
import torch


def _how_deep(level=0):
    try:
        return _how_deep(level + 1)
    except RecursionError:
        return level


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    assert _how_deep() > 10
    tensors = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [t.grad for t in tensors if t.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norm_type = float(norm_type)
    if norm_type == float("inf"):
        total = torch.stack([g.detach().abs().max() for g in grads]).max()
    else:
        total = torch.linalg.vector_norm(
            torch.stack([torch.linalg.vector_norm(g.detach(), norm_type) for g in grads]), norm_type)
    factor = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.detach().mul_(factor.to(g.dtype))
    return total
