"""Cases for the clipping exercise.

Each case is made by ``grind_kit.case``: ``inputs(**params)`` builds fresh inputs (seeded), and
``call(subject, **inputs)`` runs the subject and returns named observations. The same code
runs against the learner, the reference, the oracle and every pitfall.
"""

import torch

from grind_kit import case

INF = float("inf")


def make_params(grads, dtype=torch.float32):
    """One parameter per gradient; ``None`` gives a parameter without a gradient."""
    params = []
    for g in grads:
        if g is None:
            params.append(torch.zeros(2, dtype=dtype, requires_grad=True))
            continue
        g = torch.as_tensor(g, dtype=dtype)
        p = torch.zeros_like(g, requires_grad=True)
        p.grad = g.clone()
        params.append(p)
    return params


def run_clip(subject, params, max_norm, norm_type=2.0, pass_as="list"):
    """``norm_type=None`` leaves the argument out, so the subject's default is what runs."""
    had_grad = [p.grad is not None for p in params]
    if pass_as == "bare":
        arg = params[0]
    elif pass_as == "generator":
        arg = (p for p in params)
    else:
        arg = list(params)
    if norm_type is None:
        total = subject.clip_grad_norm_(arg, max_norm)
    else:
        total = subject.clip_grad_norm_(arg, max_norm, norm_type)
    observations = {"total_norm": total}
    for i, (p, had) in enumerate(zip(params, had_grad)):
        if had:
            observations[f"grad[{i}]"] = p.grad
        else:
            observations[f"grad[{i}] stays None"] = p.grad is None
    return observations


def fixed(grads, max_norm, norm_type=2.0, dtype=torch.float32, pass_as="list"):
    def inputs():
        return {"params": make_params(grads, dtype), "max_norm": max_norm, "norm_type": norm_type,
                "pass_as": pass_as}
    return inputs


def random_inputs(size, seed):
    """A few tensors of mixed shapes holding about ``size`` entries, with a max_norm that
    sometimes clips and sometimes does not."""
    gen = torch.Generator().manual_seed(1000 * size + seed)
    count = 1 + (size + seed) % 4
    grads = []
    for _ in range(count):
        n = max(1, size // count)
        shape = (n,) if n < 4 or seed % 2 == 0 else (2, n // 2)
        grads.append(torch.randn(shape, generator=gen) * float(torch.rand((), generator=gen) * 4 + 0.5))
    total = float(torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads])))
    ratio = [0.2, 0.5, 0.9, 1.5][(seed + size) % 4]
    return {"params": make_params(grads), "max_norm": round(total * ratio, 3), "norm_type": 2.0,
            "pass_as": "list"}


CASES = [
    case("worked_example", "example", inputs=fixed([[3.0, 4.0], [12.0]], 1.0), call=run_clip),
    case("all_zero_grads", inputs=fixed([[0.0, 0.0], [0.0]], 1.0), call=run_clip),
    case("below_max_norm_unchanged", inputs=fixed([[0.3, 0.4], [0.1]], 5.0), call=run_clip),
    case("tiny_total_below_max", inputs=fixed([[0.001, -0.002]], 1.0), call=run_clip),
    case("none_grad_skipped", inputs=fixed([[3.0, 4.0], None, [12.0]], 1.0), call=run_clip),
    case("bare_tensor", inputs=fixed([[6.0, 8.0]], 2.0, pass_as="bare"), call=run_clip),
    case("generator_of_params", inputs=fixed([[3.0, 4.0], [12.0]], 2.0, pass_as="generator"),
         call=run_clip),
    case("inf_norm", inputs=fixed([[1.0, -7.0], [3.0, 2.0]], 2.0, norm_type=INF), call=run_clip),
    case("one_norm", inputs=fixed([[1.0, -2.0], [3.0]], 2.0, norm_type=1.0), call=run_clip),
    # p other than 1, 2 and inf: the general formula, with negative entries (|g|, not g)
    case("three_norm", inputs=fixed([[1.0, -2.0], [3.0, -1.0]], 2.0, norm_type=3.0), call=run_clip),
    case("half_norm", inputs=fixed([[1.0, -4.0], [0.25]], 5.0, norm_type=0.5), call=run_clip),
    # norm_type left out: the default must be 2
    case("default_norm_type", inputs=fixed([[3.0, 4.0], [12.0]], 2.0, norm_type=None), call=run_clip),
    # more tensors than the random cases make: an answer that looks only at the first few fails
    case("many_tensors",
         inputs=fixed([[1.0, -2.0], [3.0], [0.5, 0.5], [-4.0], [2.0, 2.0, 1.0], [6.0], [-1.0, 3.0]], 2.0),
         call=run_clip),
    case("float64", inputs=fixed([[1.5, -2.5, 3.5], [[0.25, 8.0], [-4.0, 1.0]]], 0.5, dtype=torch.float64),
         call=run_clip),
    case("mixed_shapes_and_scalars", inputs=fixed([5.0, [[1.0, 2.0], [3.0, 4.0]], [[[0.5]], [[-0.5]]], -2.0], 3.0),
         call=run_clip),
    case("random", "random", inputs=random_inputs, call=run_clip, sizes=[1, 2, 3, 5, 8, 13, 32, 100, 1000],
         seeds=2),
]

# One larger input for speed feedback: a passing answer much slower than the reference here
# gets advice (never a failure).
SPEED = {
    "name": "8 tensors of 50,000 entries",
    "inputs": lambda: {"params": make_params([torch.randn(50_000, generator=torch.Generator().manual_seed(i))
                                              for i in range(8)]), "max_norm": 1.0},
    "call": run_clip,
}
