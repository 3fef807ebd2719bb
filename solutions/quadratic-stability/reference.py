"""Reference: the largest stable learning rate of a quadratic loss, by power iteration on
Hessian-vector products, and momentum's effective step."""

import torch


def _hessian_vector_product(loss_fn, theta):
    """A function v -> H v for the loss at theta, without ever forming H.

    The gradient is taken once with create_graph=True, so it is itself differentiable; the
    gradient of (grad . v) with respect to theta is then H v (double backward). Each product
    costs about one more backward pass and memory proportional to n, not n**2.
    """
    point = theta.detach().clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(loss_fn(point), point, create_graph=True)

    def hvp(v):
        (hv,) = torch.autograd.grad(grad, point, grad_outputs=v, retain_graph=True)
        return hv.detach()

    return hvp


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    hvp = _hessian_vector_product(loss_fn, theta)
    # The start vector the statement fixes: random, so it is almost surely not orthogonal to
    # the top eigenvector (a vector of ones can be), and seeded, so every answer follows the
    # same sequence of estimates.
    v = torch.randn(theta.numel(), generator=torch.Generator().manual_seed(0), dtype=theta.dtype)
    v = (v / v.norm()).reshape(theta.shape)
    estimate = None
    for _ in range(max_iter):
        hv = hvp(v)
        new = float((v * hv).sum())  # Rayleigh quotient v.Hv, v of norm 1
        size = hv.norm()
        if size == 0:
            return 0.0  # v is in the null space: the Hessian is zero along everything we can see
        # Normalise every time: without it v grows like lambda_max**k (or shrinks), and within
        # a few dozen products overflows to inf or underflows to 0, giving NaN.
        v = hv / size
        # Stop on convergence, not on a count: how many products are needed depends on the gap
        # between the top two eigenvalues, which nobody knows in advance.
        if estimate is not None and abs(new - estimate) <= tol * abs(new):
            return new
        estimate = new
    return estimate


def max_stable_lr(loss_fn, theta):
    # Gradient descent multiplies each eigen-coordinate by (1 - lr * lambda_i) per step; every
    # factor stays inside (-1, 1) exactly when lr < 2 / lambda_max. The steepest direction
    # decides, and the flattest one is then the slowest to move.
    return 2.0 / top_eigenvalue(loss_fn, theta)


def momentum_effective_lr(lr, beta):
    # With a constant gradient g the velocity v = beta * v + g settles at g / (1 - beta), so
    # each step moves lr / (1 - beta) times g.
    return lr / (1.0 - beta)
