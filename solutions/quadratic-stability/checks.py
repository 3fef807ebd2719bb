"""Cases for quadratic-stability.

Each case hands the subject a quadratic loss (a callable of a 1-D parameter tensor) and a point,
and observes ``top_eigenvalue``, ``max_stable_lr`` and, where the case has a learning rate and
a momentum, ``momentum_effective_lr``. The losses are small classes with a readable ``repr``, so
a failing example shows what it was; their Hessians are known by construction, and the oracle
finds lambda_max with ``torch.linalg.eigvalsh`` instead of power iteration.

Three cases exist for one mistake each:
- ``large_implicit_hessian`` has 40,000 parameters: an explicit Hessian would be 12.8 GB of
  float64, far past the memory limit, while Hessian-vector products need a few vectors;
- ``tiny_curvature`` and ``huge_curvature`` need a few dozen products to converge, and an
  unnormalised vector underflows to 0 or overflows to inf long before (NaN);
- ``slow_convergence`` has a single top eigenvalue 100 hidden behind a cluster at 99, so about
  a thousand products are needed: any fixed count of up to a few hundred still reads 99.0.
  It observes its values to 3 significant digits, so that every such count gets the same
  verdict (the other cases check full precision).
"""

import math

import torch

from grind_kit import case


class Diagonal:
    """0.5 * sum(d_i * theta_i**2): eigenvalues d, eigenvectors the axes."""

    def __init__(self, d):
        self.d = d

    def __call__(self, theta):
        return 0.5 * (self.d * theta * theta).sum()

    def __repr__(self):
        shown = self.d.tolist() if self.d.numel() <= 8 else f"{self.d.numel()} values"
        return f"0.5 * sum(d * theta**2), d = {shown}"


class Dense:
    """0.5 * theta^T H theta + b^T theta + c with an explicit symmetric H (small cases only)."""

    def __init__(self, H, b=None, c=0.0):
        self.H, self.b, self.c = H, b, c

    def __call__(self, theta):
        value = 0.5 * theta @ (self.H @ theta) + self.c
        return value if self.b is None else value + self.b @ theta

    def __repr__(self):
        return f"0.5 * theta^T H theta{' + b^T theta' if self.b is not None else ''}, H {self.H.shape[0]}x{self.H.shape[0]}"


class LeastSquares:
    """mean((X theta - y)**2) through torch.nn.functional.mse_loss: H = 2 X^T X / rows."""

    def __init__(self, X, y):
        self.X, self.y = X, y

    def __call__(self, theta):
        return torch.nn.functional.mse_loss(self.X @ theta, self.y)

    def __repr__(self):
        return f"mse_loss(X @ theta, y), X {tuple(self.X.shape)}"


class DiagonalPlusLowRank:
    """0.5 * sum(d * theta**2) + 0.5 * |A theta|**2: H = diag(d) + A^T A, never formed."""

    def __init__(self, d, A):
        self.d, self.A = d, A

    def __call__(self, theta):
        return 0.5 * (self.d * theta * theta).sum() + 0.5 * (self.A @ theta).pow(2).sum()

    def __repr__(self):
        return f"0.5 * sum(d * theta**2) + 0.5 * |A theta|**2, {self.d.numel()} parameters, A {tuple(self.A.shape)}"


def _rotated(eigenvalues, seed):
    """A dense symmetric matrix with these eigenvalues and seeded random eigenvectors."""
    gen = torch.Generator().manual_seed(seed)
    n = len(eigenvalues)
    Q, _ = torch.linalg.qr(torch.randn(n, n, generator=gen, dtype=torch.float64))
    lam = torch.as_tensor(eigenvalues, dtype=torch.float64)
    return (Q * lam) @ Q.T


def stability(subject, loss_fn, theta, lr=None, beta=None, digits=None):
    lam = float(subject.top_eigenvalue(loss_fn, theta.clone()))
    lr_max = float(subject.max_stable_lr(loss_fn, theta.clone()))
    if digits is None:
        observed = {"lambda_max": lam, "max stable lr": lr_max}
    else:
        def rounded(x):
            return float(f"{x:.{digits}g}") if math.isfinite(x) else x
        observed = {f"lambda_max ({digits} significant digits)": rounded(lam),
                    f"max stable lr ({digits} significant digits)": rounded(lr_max)}
    if lr is not None:
        observed["momentum effective lr"] = float(subject.momentum_effective_lr(lr, beta))
    return observed


def momentum_table(subject, pairs):
    return {"effective lr per (lr, beta)": [float(subject.momentum_effective_lr(lr, b)) for lr, b in pairs]}


def with_loss(make, n=None, dtype=torch.float64, seed=0, **extra):
    def inputs():
        loss_fn = make()
        size = n if n is not None else _size(loss_fn)
        theta = torch.randn(size, generator=torch.Generator().manual_seed(seed), dtype=torch.float64).to(dtype)
        return {"loss_fn": loss_fn, "theta": theta, **extra}
    return inputs


def _size(loss_fn):
    for name in ("d", "H", "X"):
        value = getattr(loss_fn, name, None)
        if value is not None:
            return value.shape[-1]
    raise ValueError(loss_fn)


def _plateau(n=2000):
    """One eigenvalue 100, half the rest at 99, the others spread over [5, 50], one at 0.5."""
    rest = n - 2 - n // 2
    lam = torch.cat([torch.tensor([100.0, 0.5]), torch.full((n // 2,), 99.0), torch.linspace(5.0, 50.0, rest)])
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(3))
    return Diagonal(lam.double()[perm])


def _large(n=40_000):
    gen = torch.Generator().manual_seed(4)
    d = 1.0 + torch.rand(n, generator=gen, dtype=torch.float64)
    d[0] = 0.1  # a lone smallest eigenvalue, so that even a search for lambda_min ends quickly
    A = torch.randn(3, n, generator=gen, dtype=torch.float64) / math.sqrt(n)
    A = A * torch.tensor([[30.0 ** 0.5], [12.0 ** 0.5], [4.0 ** 0.5]], dtype=torch.float64)
    return DiagonalPlusLowRank(d, A)


def _least_squares():
    gen = torch.Generator().manual_seed(5)
    X = torch.randn(40, 5, generator=gen, dtype=torch.float64) * torch.tensor([3.0, 1.0, 1.0, 0.5, 0.2],
                                                                               dtype=torch.float64)
    return LeastSquares(X, torch.randn(40, generator=gen, dtype=torch.float64))


def _ridge_low_rank():
    gen = torch.Generator().manual_seed(6)
    A = torch.randn(3, 10, generator=gen, dtype=torch.float64)
    return Dense(A.T @ A + 0.01 * torch.eye(10, dtype=torch.float64))


def random_inputs(size, seed):
    """A dense quadratic with ``size`` parameters, random eigenvectors, a linear term, and a top
    eigenvalue drawn from 1e-2 to 1e3. The second is at most 0.6 of it (a hundred products
    always converge), the rest lie between 0.05 and 0.6 of it, and the smallest, alone, at 0.01
    (so that a search for lambda_min converges too, and every mistake is named the same way).
    A learning rate and a momentum come from the seed."""
    gen = torch.Generator().manual_seed(100 * size + seed)
    top = 10 ** float(torch.rand((), generator=gen) * 5 - 2)
    if size == 1:
        lam = [top]
    else:
        middle = torch.rand(size - 2, generator=gen, dtype=torch.float64)
        lam = [top] + (top * 10 ** (-1.08 * middle) * 0.6).tolist() + [0.01 * top]
    H = _rotated(lam, 7 * size + seed)
    b = torch.randn(size, generator=gen, dtype=torch.float64)
    theta = torch.randn(size, generator=gen, dtype=torch.float64) * 3
    lr = [0.1, 0.01, 0.003][seed % 3]
    beta = [0.0, 0.5, 0.9, 0.95, 0.99][(size + seed) % 5]
    return {"loss_fn": Dense(H, b, 1.5), "theta": theta, "lr": lr, "beta": beta}


CASES = [
    # Public: the seed's numbers. Eigenvalues 1 and 100; beta = 0.9 makes a step of 10 * lr.
    case("worked_example", "example", call=stability,
         inputs=lambda: {"loss_fn": Diagonal(torch.tensor([1.0, 100.0], dtype=torch.float64)),
                         "theta": torch.ones(2, dtype=torch.float64), "lr": 0.01, "beta": 0.9}),

    case("dense_spd", call=stability, inputs=with_loss(lambda: Dense(_rotated([20.0, 9.0, 4.0, 2.0, 1.0, 0.5], 1)))),
    case("least_squares_mse", call=stability, inputs=with_loss(_least_squares)),
    case("linear_term_far_from_minimum", call=stability,
         inputs=with_loss(lambda: Dense(_rotated([7.0, 3.0, 1.0, 0.25], 2),
                                        torch.tensor([5.0, -3.0, 2.0, 8.0], dtype=torch.float64), 4.0), seed=9)),
    case("low_rank_plus_ridge", call=stability, inputs=with_loss(_ridge_low_rank)),
    case("fast_gap", call=stability, inputs=with_loss(lambda: Dense(_rotated([10.0, 2.5, 1.0, 0.5], 8)))),
    case("tiny_curvature", call=stability,
         inputs=with_loss(lambda: Dense(_rotated([1e-9, 7e-10, 4e-10, 1e-10, 5e-11], 10)))),
    case("huge_curvature", call=stability,
         inputs=with_loss(lambda: Dense(_rotated([1e9, 7e8, 4e8, 1e8, 5e7], 11)))),
    case("slow_convergence", call=stability, inputs=with_loss(_plateau, digits=3)),
    case("float32_parameters", call=stability,
         inputs=with_loss(lambda: Diagonal(torch.tensor([3.0, 1.0, 0.5, 0.25])), dtype=torch.float32)),
    case("large_implicit_hessian", call=stability, inputs=with_loss(_large)),
    case("momentum_table", call=momentum_table,
         inputs=lambda: {"pairs": [(0.1, 0.0), (0.1, 0.5), (0.01, 0.9), (0.003, 0.95), (0.001, 0.99), (1.0, 0.8)]}),

    case("random", "random", call=stability, inputs=random_inputs, sizes=[2, 3, 8, 32, 128], seeds=2),
]
