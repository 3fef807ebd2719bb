# expect: failed pitfall=lambda-min
# source: independent mistake: "the smallest curvature limits the step", found by power iteration on (lambda_max I - H)
import torch


def _power(apply, n, dtype, tol=1e-10, max_iter=10_000):
    v = torch.randn(n, generator=torch.Generator().manual_seed(0), dtype=dtype)
    v = v / v.norm()
    last = None
    for _ in range(max_iter):
        w = apply(v)
        est = (v @ w).item()
        v = w / w.norm()
        if last is not None and abs(est - last) <= tol * abs(est):
            return est
        last = est
    return last


def _hvp(loss_fn, theta):
    p = theta.detach().clone().requires_grad_(True)
    g = torch.autograd.grad(loss_fn(p), p, create_graph=True)[0]
    return lambda v: torch.autograd.grad(g, p, v, retain_graph=True)[0]


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    return _power(_hvp(loss_fn, theta), theta.numel(), theta.dtype, tol, max_iter)


def max_stable_lr(loss_fn, theta):
    hvp = _hvp(loss_fn, theta)
    top = _power(hvp, theta.numel(), theta.dtype)
    lam_min = top - _power(lambda v: top * v - hvp(v), theta.numel(), theta.dtype)
    return 2.0 / lam_min


def momentum_effective_lr(lr, beta):
    return lr / (1 - beta)
