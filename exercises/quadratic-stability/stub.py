"""The largest stable learning rate of a quadratic, by power iteration. Run `grind run quadratic-stability`."""

import torch


def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
    """The largest eigenvalue of the Hessian of `loss_fn` at `theta`, by power iteration on
    Hessian-vector products (never the whole Hessian).

    loss_fn: a callable taking a 1-D tensor shaped like theta and returning a scalar tensor.
    theta:   a 1-D float tensor (float32 or float64); do not modify it.
    Start from torch.randn(n, generator=torch.Generator().manual_seed(0), dtype=theta.dtype),
    normalised; stop when |new - old| <= tol * |new|, or after max_iter products.
    Returns a float (or a 0-d tensor).
    """
    raise NotImplementedError("write top_eigenvalue")


def max_stable_lr(loss_fn, theta):
    """The largest learning rate for which gradient descent on this quadratic does not diverge."""
    raise NotImplementedError("write max_stable_lr")


def momentum_effective_lr(lr, beta):
    """The step size that heavy-ball momentum `beta` reaches under a constant gradient of 1."""
    raise NotImplementedError("write momentum_effective_lr")
