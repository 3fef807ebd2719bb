# expect: passed
# source: independent answer: Hessian-vector products reverse-over-reverse with torch.func (vjp of torch.func.grad, linearised once), iteration in a while loop
import torch
from torch.func import grad, vjp


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    x = theta.detach()
    _, product = vjp(grad(loss_fn), x)  # v -> (d grad / d x)^T v = H v
    v = torch.randn(x.numel(), generator=torch.Generator().manual_seed(0), dtype=x.dtype)
    v = v / torch.linalg.vector_norm(v)
    old, k = None, 0
    while k < max_iter:
        (hv,) = product(v)
        k += 1
        new = torch.dot(v, hv).item()
        v = hv / torch.linalg.vector_norm(hv)
        if old is not None and abs(new - old) <= tol * abs(new):
            break
        old = new
    return new


def max_stable_lr(loss_fn, theta):
    return 2 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return lr / (1 - beta)
