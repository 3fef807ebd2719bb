# expect: failed pitfall=explicit-hessian
# source: independent mistake: the whole Hessian with torch.func.hessian, then eigvalsh (exact, n**2 memory)
import torch


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    H = torch.func.hessian(loss_fn)(theta.detach())
    return torch.linalg.eigvalsh(H)[-1].item()


def max_stable_lr(loss_fn, theta):
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return lr / (1.0 - beta)
