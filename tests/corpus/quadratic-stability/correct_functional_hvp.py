# expect: passed
# source: independent answer: torch.autograd.functional.hvp for every product (the graph rebuilt each time), estimates kept in a list
import torch
from torch.autograd.functional import hvp


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    x = theta.detach().clone()
    gen = torch.Generator().manual_seed(0)
    v = torch.randn(x.numel(), generator=gen, dtype=x.dtype)
    v /= v.norm()
    history = []
    for _ in range(max_iter):
        _, hv = hvp(loss_fn, x, v)
        history.append(float(v @ hv))
        v = hv / hv.norm()
        if len(history) > 1 and abs(history[-1] - history[-2]) <= tol * abs(history[-1]):
            break
    return history[-1]


def max_stable_lr(loss_fn, theta):
    lam = top_eigenvalue(loss_fn, theta)
    return 2.0 / lam


def momentum_effective_lr(lr, beta):
    # sum of the geometric series 1 + beta + beta^2 + ...
    return lr * 1.0 / (1.0 - beta)
