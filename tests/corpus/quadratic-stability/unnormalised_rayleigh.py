# expect: failed pitfall=no-normalisation
# source: independent mistake: v <- Hv with no rescaling, the estimate read as the Rayleigh quotient (v.Hv)/(v.v); fine on moderate curvature
import torch


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    p = theta.detach().clone().requires_grad_(True)
    grad = torch.autograd.grad(loss_fn(p), p, create_graph=True)[0]
    v = torch.randn(p.numel(), generator=torch.Generator().manual_seed(0), dtype=p.dtype)
    v = v / v.norm()
    lam = None
    for _ in range(max_iter):
        hv = torch.autograd.grad(grad, p, v, retain_graph=True)[0]
        new = ((v @ hv) / (v @ v)).item()
        v = hv
        if lam is not None and abs(new - lam) <= tol * abs(new):
            return new
        lam = new
    return lam


def max_stable_lr(loss_fn, theta):
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return lr / (1.0 - beta)
