# expect: failed pitfall=fixed-count
# source: independent mistake: "50 iterations is plenty" -- normalised power iteration with no convergence test
import torch


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    p = theta.detach().clone().requires_grad_(True)
    g = torch.autograd.grad(loss_fn(p), p, create_graph=True)[0]
    v = torch.randn(p.numel(), generator=torch.Generator().manual_seed(0), dtype=p.dtype)
    v /= v.norm()
    for _ in range(50):
        hv = torch.autograd.grad(g, p, v, retain_graph=True)[0]
        lam = torch.dot(v, hv).item()
        v = hv / hv.norm()
    return lam


def max_stable_lr(loss_fn, theta):
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return lr / (1.0 - beta)
