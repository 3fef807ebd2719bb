# expect: passed
# A correct answer that first recurses on purpose until Python raises RecursionError, catches it,
# and then answers correctly. Deep recursion is not tampering with the judge's guard: the verdict
# must be passed, never forbidden or crashed.


def _deeper(n):
    return _deeper(n + 1) + 1


def _hit_the_limit():
    try:
        _deeper(0)
    except RecursionError:
        return True
    return False


_hit_the_limit()  # once while loading


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    import torch

    _hit_the_limit()  # and once per call
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads])
    total = torch.linalg.vector_norm(norms, float(norm_type))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))
    return total
