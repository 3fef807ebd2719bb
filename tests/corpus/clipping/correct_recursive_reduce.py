# expect: passed
# source: independent answer: recursion over the parameter list and functools.reduce, everything in Python floats
import functools
import math

import torch


def _collect(items, out):
    if not items:
        return out
    head, *tail = items
    if head.grad is not None:
        out.append(head.grad)
    return _collect(tail, out)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    items = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = _collect(items, [])
    p = float(norm_type)
    if math.isinf(p):
        total = functools.reduce(max, (float(g.abs().max()) for g in grads), 0.0)
    else:
        total = functools.reduce(lambda acc, g: acc + float(g.double().abs().pow(p).sum()), grads, 0.0) ** (1.0 / p)
    coef = min(1.0, max_norm / (total + 1e-6))
    for g in grads:
        g.mul_(coef)
    return torch.tensor(total)
