# expect: passed
# A correct answer that measures momentum's step by iterating the velocity until it settles, and returns tensors.
import torch


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    p = theta.detach().clone().requires_grad_(True)
    g = torch.autograd.grad(loss_fn(p), p, create_graph=True)[0]
    v = torch.randn(p.numel(), generator=torch.Generator().manual_seed(0), dtype=p.dtype)
    v = v / v.norm()
    lam_old = None
    for _ in range(max_iter):
        hv = torch.autograd.grad(g, p, v, retain_graph=True)[0].detach()
        lam = v @ hv
        v = hv / hv.norm()
        if lam_old is not None and (lam - lam_old).abs() <= tol * lam.abs():
            break
        lam_old = lam
    return lam


def max_stable_lr(loss_fn, theta):
    return 2 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    velocity = 0.0
    for _ in range(100_000):
        new = beta * velocity + 1.0
        if new == velocity:
            break
        velocity = new
    return lr * velocity
