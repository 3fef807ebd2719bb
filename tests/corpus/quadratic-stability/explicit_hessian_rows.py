# expect: failed pitfall=explicit-hessian
# source: independent mistake: H assembled row by row from Hessian-vector products of the unit vectors into a preallocated n x n matrix, then power iteration on H @ v
import torch


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    n = theta.numel()
    p = theta.detach().clone().requires_grad_(True)
    g = torch.autograd.grad(loss_fn(p), p, create_graph=True)[0]
    H = torch.zeros(n, n, dtype=theta.dtype)
    for i in range(n):
        e = torch.zeros(n, dtype=theta.dtype)
        e[i] = 1
        H[i] = torch.autograd.grad(g, p, e, retain_graph=True)[0]
    v = torch.randn(n, generator=torch.Generator().manual_seed(0), dtype=theta.dtype)
    v = v / v.norm()
    old = None
    for _ in range(max_iter):
        hv = H @ v
        new = float(v @ hv)
        v = hv / hv.norm()
        if old is not None and abs(new - old) <= tol * abs(new):
            return new
        old = new
    return old


def max_stable_lr(loss_fn, theta):
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return lr / (1.0 - beta)
