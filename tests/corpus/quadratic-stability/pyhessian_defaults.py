# expect: failed pitfall=pyhessian-stop
# source: look-alike of pyhessian/hessian.py eigenvalues(maxIter=100, tol=1e-3): break when |old - new| / (|old| + 1e-6) < tol, returning the previous estimate
import torch


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    params = theta.detach().clone().requires_grad_(True)
    gradsH = torch.autograd.grad(loss_fn(params), params, create_graph=True)[0]
    v = torch.randn(params.numel(), generator=torch.Generator().manual_seed(0), dtype=params.dtype)
    v = v / torch.sqrt(torch.sum(v * v))
    eigenvalue = None
    for i in range(100):
        Hv = torch.autograd.grad(gradsH, params, grad_outputs=v, only_inputs=True, retain_graph=True)[0]
        tmp_eigenvalue = torch.sum(Hv * v).item()
        v = Hv / torch.sqrt(torch.sum(Hv * Hv))
        if eigenvalue is None:
            eigenvalue = tmp_eigenvalue
        else:
            if abs(eigenvalue - tmp_eigenvalue) / (abs(eigenvalue) + 1e-6) < 1e-3:
                break
            else:
                eigenvalue = tmp_eigenvalue
    return eigenvalue


def max_stable_lr(loss_fn, theta):
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    return lr / (1.0 - beta)
