# expect: failed pitfall=explicit-hessian
# The learner builds H with torch.autograd.functional.hessian(vectorize=True): right until H no longer fits.
import torch


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    H = torch.autograd.functional.hessian(loss_fn, theta.detach(), vectorize=True)
    return float(torch.linalg.eigvalsh(H).max())


def max_stable_lr(loss_fn, theta):
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return lr / (1.0 - beta)
