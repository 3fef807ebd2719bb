"""Oracle: the top eigenvalue found by torch.linalg.eigvalsh instead of power iteration.

Up to 500 parameters the whole Hessian is built with torch.autograd.functional.hessian and its
eigenvalues come from eigvalsh. Beyond that (the cases where an explicit Hessian would not fit
in the memory limit) a Lanczos run of Hessian-vector products (torch.autograd double backward,
fully re-orthogonalised, at most 150 of them) reduces H to a small tridiagonal matrix whose
eigvalsh gives lambda_max: a different algorithm from the reference's, agreeing to rounding.
The momentum step is measured: torch.optim.SGD with that momentum runs on a constant gradient
until its velocity buffer stops changing (the step is lr times it).
"""

import torch


def _hvp_fn(loss_fn, theta):
    point = theta.detach().clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(loss_fn(point), point, create_graph=True)
    return lambda v: torch.autograd.grad(grad, point, grad_outputs=v, retain_graph=True)[0].detach()


def _lanczos_top(loss_fn, theta, steps=150):
    hvp = _hvp_fn(loss_fn, theta)
    n = theta.numel()
    steps = min(steps, n)
    Q = torch.zeros(steps, n, dtype=torch.float64)
    q = torch.randn(n, generator=torch.Generator().manual_seed(12345), dtype=torch.float64)
    Q[0] = q / q.norm()
    alphas, betas, top = [], [], None
    for k in range(steps):
        w = hvp(Q[k].to(theta.dtype).reshape(theta.shape)).reshape(-1).to(torch.float64)
        alphas.append(float(w @ Q[k]))
        basis = Q[: k + 1]
        w = w - basis.T @ (basis @ w)
        w = w - basis.T @ (basis @ w)  # twice: full re-orthogonalisation
        T = torch.diag(torch.tensor(alphas, dtype=torch.float64))
        for i, b in enumerate(betas):
            T[i, i + 1] = T[i + 1, i] = b
        estimate = float(torch.linalg.eigvalsh(T)[-1])
        beta = float(w.norm())
        # done when the Krylov space is exhausted or the top Ritz value has settled to rounding
        if k + 1 == steps or beta <= 1e-12 * abs(alphas[0]) or (top is not None and abs(estimate - top) <= 1e-15 * abs(estimate)):
            return estimate
        top = estimate
        betas.append(beta)
        Q[k + 1] = w / beta
    return top


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    if theta.numel() <= 500:
        H = torch.autograd.functional.hessian(loss_fn, theta.detach())
        H = H.reshape(theta.numel(), theta.numel()).to(torch.float64)
        return float(torch.linalg.eigvalsh((H + H.T) / 2)[-1])
    return _lanczos_top(loss_fn, theta)


def max_stable_lr(loss_fn, theta):
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    p = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([p], lr=lr, momentum=beta)
    previous = None
    for _ in range(200_000):
        p.grad = torch.ones(1, dtype=torch.float64)  # a constant gradient of 1
        opt.step()
        # the step torch takes is lr times its velocity buffer; stop once the buffer is fixed
        velocity = float(opt.state[p]["momentum_buffer"]) if beta else 1.0
        if velocity == previous:
            break
        previous = velocity
    return lr * velocity
