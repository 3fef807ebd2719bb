# expect: failed pitfall=one-over-lambda
# source: independent mistake: "the learning rate should be 1 / L for an L-smooth function" taken as the stability edge
import torch


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    p = theta.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(loss_fn(p), p, create_graph=True)
    v = torch.randn(p.numel(), generator=torch.Generator().manual_seed(0), dtype=p.dtype)
    v = v / v.norm()
    prev = None
    for _ in range(max_iter):
        (hv,) = torch.autograd.grad(g, p, v, retain_graph=True)
        cur = float(v @ hv)
        v = hv / hv.norm()
        if prev is not None and abs(cur - prev) <= tol * abs(cur):
            return cur
        prev = cur
    return prev


def max_stable_lr(loss_fn, theta):
    return 1.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return lr / (1 - beta)
