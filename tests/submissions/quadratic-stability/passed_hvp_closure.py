# expect: passed
# A correct answer with the Hessian-vector product as a closure and the loop counting products explicitly.
import torch


def _hvp(loss_fn, theta):
    x = theta.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(loss_fn(x), x, create_graph=True)

    def product(v):
        return torch.autograd.grad(g, x, grad_outputs=v, retain_graph=True)[0]
    return product


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    H = _hvp(loss_fn, theta)
    v = torch.randn(theta.numel(), generator=torch.Generator().manual_seed(0), dtype=theta.dtype)
    v = v / v.norm()
    products, previous = 0, None
    while products < max_iter:
        hv = H(v)
        products += 1
        current = (v * hv).sum().item()
        v = hv / hv.norm()
        if previous is not None and abs(current - previous) <= tol * abs(current):
            return current
        previous = current
    return previous


def max_stable_lr(loss_fn, theta):
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return lr / (1.0 - beta)
