# expect: error
# Unbounded recursion while the module loads: the RecursionError is the learner's error (the
# file could not be loaded), never "forbidden" (the guard's profile hook is not being removed)
# and never a crash of the judge.


def _deeper(n):
    return _deeper(n + 1) + 1


_deeper(0)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    import torch

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
