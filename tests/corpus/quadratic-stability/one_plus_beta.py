# expect: failed pitfall=one-plus-beta
# source: independent mistake: the momentum gain written as 1 / (1 + beta), power iteration right (numpy bookkeeping)
import numpy as np
import torch


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    x = theta.detach().clone().requires_grad_(True)
    g = torch.autograd.grad(loss_fn(x), x, create_graph=True)[0]
    v = torch.randn(x.numel(), generator=torch.Generator().manual_seed(0), dtype=x.dtype)
    v = v / v.norm()
    est = []
    for _ in range(max_iter):
        w = torch.autograd.grad(g, x, v, retain_graph=True)[0]
        est.append(float(v @ w))
        v = w / w.norm()
        if len(est) >= 2 and np.abs(est[-1] - est[-2]) <= tol * np.abs(est[-1]):
            break
    return est[-1]


def max_stable_lr(loss_fn, theta):
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return lr / (1.0 + beta)
