"""Known-wrong answers for quadratic-stability.

The correct power iteration is written once, with options for the ways it goes wrong (no
normalisation, a fixed count, PyHessian's stopping rule), and the three entry points are built
from options (``Deltas.on_options``): which eigenvalue the learning rate uses, the factor in
front of it, and the momentum formula.
"""

import torch

from grind_kit import Deltas


def _hvp(loss_fn, theta):
    point = theta.detach().clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(loss_fn(point), point, create_graph=True)
    return lambda v: torch.autograd.grad(grad, point, grad_outputs=v, retain_graph=True)[0].detach()


def _start(theta):
    v = torch.randn(theta.numel(), generator=torch.Generator().manual_seed(0), dtype=theta.dtype)
    return (v / v.norm()).reshape(theta.shape)


def _power(op, theta, tol=1e-10, max_iter=10_000, normalise=True, stop="converged"):
    """Power iteration on ``op``; ``stop`` is "converged" (the statement's rule), "count" (always
    max_iter products) or "pyhessian" (PyHessian's rule, below)."""
    v = _start(theta)
    estimate = None
    for _ in range(max_iter):
        hv = op(v)
        if normalise:
            new = float((v * hv).sum())
            size = hv.norm()
            if size == 0:
                return 0.0
            v = hv / size
        else:
            new = float((v * hv).sum() / (v * v).sum())  # the Rayleigh quotient of an unnormalised v
            v = hv
        if stop == "pyhessian":
            # pyhessian/hessian.py, eigenvalues(maxIter=100, tol=1e-3): break when
            # |old - new| / (|old| + 1e-6) < tol, returning the previous estimate
            if estimate is not None and abs(estimate - new) / (abs(estimate) + 1e-6) < 1e-3:
                return estimate
        elif stop == "converged" and estimate is not None and abs(new - estimate) <= tol * abs(new):
            return new
        estimate = new
    return estimate


def _implementation(options):
    normalise = options.get("normalise", True)
    stop = options.get("stop", "converged")
    count = {"count": 100, "pyhessian": 100}.get(stop, 10_000)

    def top_eigenvalue(loss_fn, theta, tol=1e-10, max_iter=10_000):
        if options.get("explicit"):
            # the whole n x n Hessian, then its eigenvalues: exact, and n**2 memory
            H = torch.func.hessian(loss_fn)(theta.detach())
            return float(torch.linalg.eigvalsh(H.reshape(theta.numel(), -1))[-1])
        return _power(_hvp(loss_fn, theta), theta, tol, min(max_iter, count), normalise, stop)

    def max_stable_lr(loss_fn, theta):
        top = top_eigenvalue(loss_fn, theta)
        if options.get("smallest"):
            # power iteration on (top * I - H) finds top - lambda_min
            hvp = _hvp(loss_fn, theta)
            shifted = _power(lambda v: top * v - hvp(v), theta)
            return 2.0 / (top - shifted)
        return options.get("numerator", 2.0) / top

    def momentum_effective_lr(lr, beta):
        return lr / (1.0 + beta) if options.get("one_plus_beta") else lr / (1.0 - beta)

    return {"top_eigenvalue": top_eigenvalue, "max_stable_lr": max_stable_lr,
            "momentum_effective_lr": momentum_effective_lr}


MISTAKES = Deltas.on_options(_implementation)
COMBINE = "all"
combine = MISTAKES.combine

PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "one-over-lambda",
        "name": "max stable lr taken as 1 / lambda_max",
        "delta": {"numerator": 1.0},
        "explanation": "Gradient descent multiplies the coordinate along an eigenvector with eigenvalue lambda "
                       "by (1 - lr * lambda) each step. It shrinks while |1 - lr * lambda| < 1, that is up to "
                       "lr = 2 / lambda: between 1 / lambda and 2 / lambda the coordinate overshoots and "
                       "oscillates, but still converges. 1 / lambda_max is the step that lands exactly on the "
                       "minimum along the steepest direction (the fastest for it), not the edge of stability.",
        "hint": "Solve |1 - lr * lambda_max| < 1 for lr.",
    },
    {
        "slug": "lambda-min",
        "name": "the smallest eigenvalue used for the learning rate",
        "delta": {"smallest": True},
        "explanation": "The limit comes from the steepest direction, the largest eigenvalue: 2 / lambda_min is "
                       "a far larger step, stable only along the flattest direction and divergent along every "
                       "direction with lambda > 2 / lr. With eigenvalues 1 and 100, 2 / lambda_min = 2 makes the "
                       "steep coordinate grow by |1 - 200| = 199 per step. The flat direction is what makes "
                       "training slow, not what makes it unstable.",
        "hint": "Power iteration converges to the eigenvalue of largest magnitude: use that one, 2 / lambda_max.",
    },
    {
        "slug": "explicit-hessian",
        "name": "the whole Hessian built explicitly",
        "delta": {"explicit": True},
        "explanation": "Building the n x n Hessian (torch.func.hessian, torch.autograd.functional.hessian, or n "
                       "Hessian-vector products stacked) and calling eigvalsh is exact on small problems, but "
                       "its memory is n**2: for the 40,000 parameters of the large case that is 12.8 GB of "
                       "float64, far past the memory limit, and for a real network it is impossible. Power "
                       "iteration needs only Hessian-vector products, each about the cost of one backward pass "
                       "and a few vectors of memory.",
        "hint": "Take the gradient once with create_graph=True, then H v = torch.autograd.grad(grad, theta, "
                "grad_outputs=v, retain_graph=True); never materialise H.",
    },
    {
        "slug": "no-normalisation",
        "name": "power iteration without normalising the vector",
        "delta": {"normalise": False},
        "explanation": "Without dividing by its norm, v is multiplied by about lambda_max at every product: with "
                       "lambda_max = 1e9 its squared norm overflows float64 in under twenty products, with 1e-9 "
                       "it underflows to 0, and the estimate becomes inf or NaN (inf / inf, 0 / 0). The direction is "
                       "what converges; its length is arbitrary, so reset it to 1 every time.",
        "hint": "After each product, v = hv / hv.norm(), and read the estimate as v . Hv with the unit v.",
    },
    {
        "slug": "fixed-count",
        "name": "a fixed number of products, no convergence check",
        "delta": {"stop": "count"},
        "explanation": "How many products power iteration needs depends on the ratio of the top two eigenvalues, "
                       "which is not known in advance: with a single eigenvalue 100 behind a cluster at 99 "
                       "(the slow case), a hundred products still read 99.0, and about a thousand are needed. "
                       "A fixed count is right on easy spectra and silently wrong on hard ones; stop when the "
                       "estimate has stopped changing (relative change below tol), with max_iter only as a "
                       "safety net.",
        "hint": "Keep the previous estimate and stop when |new - old| <= tol * |new|.",
    },
    {
        "slug": "pyhessian-stop",
        "name": "PyHessian's stopping rule (tol = 1e-3 relative to |old| + 1e-6, at most 100 products)",
        "library": "PyHessian",
        "convention": True,
        "delta": {"stop": "pyhessian"},
        "explanation": "PyHessian's hessian.eigenvalues(maxIter=100, tol=1e-3) (pyhessian/hessian.py) stops "
                       "when |old - new| / (|old| + 1e-6) < 1e-3 and returns the previous estimate: good to "
                       "about three digits, and with curvature far below 1e-6 the + 1e-6 makes it stop after "
                       "two products (tiny_curvature reads the first estimate, not 1e-9). It is a sensible "
                       "default for plotting sharpness during training; this exercise asks for the rule in "
                       "the statement, |new - old| <= tol * |new| with tol = 1e-10, returning the new estimate.",
        "hint": "Use the statement's tol (1e-10), relative to |new| with no additive constant, and max_iter = 10000.",
    },
    {
        "slug": "one-plus-beta",
        "name": "momentum's effective step as lr / (1 + beta)",
        "delta": {"one_plus_beta": True},
        "explanation": "With a constant gradient g the velocity v = beta * v + g grows to the geometric sum "
                       "g * (1 + beta + beta**2 + ...) = g / (1 - beta), so the step becomes lr / (1 - beta) "
                       "times g: ten times lr for beta = 0.9, not lr / 1.9. Momentum amplifies a persistent "
                       "direction; that is why lr and beta must be tuned together.",
        "hint": "Sum the geometric series 1 + beta + beta**2 + ...",
    },
])
