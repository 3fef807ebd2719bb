"""Cases for the adam exercise.

Every case drives the subject's optimizer through a fixed script of gradients (assigned to
``p.grad`` directly, so tiny, huge and missing gradients are exactly what the case says) and
records every parameter after every ``step()``: ``"params per step"`` has shape
[steps, total number of entries], so a report names the first step that went wrong.
One case runs a real training loop instead (zero_grad, backward, step on an nn.Linear).
"""

import torch

STEPS = 50


def make_params(init, dtype=torch.float64):
    return [torch.nn.Parameter(torch.as_tensor(t, dtype=dtype).clone()) for t in init]


def flat(params):
    return torch.cat([p.detach().reshape(-1).clone() for p in params])


class UsesTorchOptimizer(Exception):
    """The submission handed back torch's own optimizer instead of its own."""


def construct(subject, optimizer, params, kwargs):
    opt = getattr(subject, optimizer)(params, **kwargs)
    # The runtime guard trips only when the learner's own code calls torch.optim.Adam; an alias
    # made at import time (Adam = getattr(torch.optim, ...)) is called from here instead.
    if type(opt) in (torch.optim.Adam, torch.optim.AdamW):
        raise UsesTorchOptimizer(f"{optimizer} is torch.optim.{type(opt).__name__} itself: "
                                 "this exercise asks you to write it")
    return opt


def run_script(subject, optimizer, params, grads, kwargs):
    """Assign each step's gradients (None means no gradient this step), call step(), record."""
    opt = construct(subject, optimizer, params, kwargs)
    rows = []
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = None if g is None else g.clone()
        opt.step()
        rows.append(flat(params))
    return {"params per step": torch.stack(rows)}


def script(optimizer, init, grads, dtype=torch.float64, **kwargs):
    """A fixed case: ``grads`` is a list of steps, each a list with one entry per parameter."""
    def inputs():
        return {"optimizer": optimizer, "params": make_params(init, dtype),
                "grads": [[None if g is None else torch.as_tensor(g, dtype=dtype) for g in row] for row in grads],
                "kwargs": dict(kwargs)}
    return inputs


def seeded(optimizer, shapes, seed, steps=STEPS, scales=None, none_every=None, dtype=torch.float64, **kwargs):
    """Random initial values and gradients. ``scales[i]`` multiplies parameter i's gradients
    (a number, or a tensor of per-entry scales); ``none_every[i]`` is a function step -> bool
    saying when parameter i has no gradient."""
    def inputs():
        gen = torch.Generator().manual_seed(seed)
        init = [torch.randn(s, generator=gen, dtype=torch.float64) for s in shapes]
        grads = []
        for t in range(steps):
            row = []
            for i, s in enumerate(shapes):
                g = torch.randn(s, generator=gen, dtype=torch.float64)
                scale = 1.0 if scales is None else scales[i]
                g = g * scale
                skip = none_every is not None and none_every[i] is not None and none_every[i](t)
                row.append(None if skip else g.to(dtype))
            grads.append(row)
        return {"optimizer": optimizer, "params": make_params(init, dtype), "grads": grads,
                "kwargs": dict(kwargs)}
    return inputs


def log_scales(shape, seed, low=-10.0, high=5.0):
    """Per-entry gradient scales spread log-uniformly from 1e-10 to 1e5."""
    gen = torch.Generator().manual_seed(seed)
    return 10.0 ** (torch.rand(shape, generator=gen, dtype=torch.float64) * (high - low) + low)


def training_loop(subject, optimizer, model, x, y, steps, kwargs):
    """The usual loop: zero_grad, forward, backward, step. The optimizer gets model.parameters(),
    a generator, as in real code."""
    opt = construct(subject, optimizer, model.parameters(), kwargs)
    params = list(model.parameters())
    rows, losses, cleared = [], [], []
    for _ in range(steps):
        opt.zero_grad()
        cleared.append(all(p.grad is None or not bool(p.grad.any()) for p in params))
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        rows.append(flat(params))
    return {"params per step": torch.stack(rows), "loss per step": losses,
            "grads cleared by zero_grad per step": cleared}


def loop_inputs(optimizer, seed, steps=30, **kwargs):
    def inputs():
        gen = torch.Generator().manual_seed(seed)
        model = torch.nn.Linear(4, 3).double()
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64))
        x = torch.randn(16, 4, generator=gen, dtype=torch.float64)
        y = torch.randn(16, 3, generator=gen, dtype=torch.float64)
        return {"optimizer": optimizer, "model": model, "x": x, "y": y, "steps": steps, "kwargs": dict(kwargs)}
    return inputs


def random_inputs(size, seed):
    """Adam or AdamW (by seed), ``size`` entries split over up to three parameters, per-entry
    gradient scales from 1e-10 to 1e5, weight decay on or off, and one parameter that misses
    its gradient on some steps."""
    gen = torch.Generator().manual_seed(7919 * size + seed)
    optimizer = "AdamW" if seed % 2 else "Adam"
    count = min(3, size)
    shapes = [(max(1, size // count),) for _ in range(count)]
    lr = [0.1, 0.01, 0.03][(size + seed) % 3]
    wd = [0.0, 0.1, 0.02][(size + 2 * seed) % 3]
    betas = [(0.9, 0.999), (0.8, 0.99)][(size // 4 + seed) % 2]
    scales = [log_scales(s, 100 * size + seed + i) for i, s in enumerate(shapes)]
    period = 2 + int(torch.randint(0, 4, (), generator=gen))
    none_every = [None] * count
    none_every[-1] = lambda t: t < 3 or t % period == 0
    return seeded(optimizer, shapes, 31 * size + seed, steps=60, scales=scales, none_every=none_every,
                  lr=lr, betas=betas, weight_decay=wd)()


def alternating(start, period):
    return lambda t: t < start or t % period == 0


CASES = [
    # Public: the numbers in the statement. Constant gradients 0.5 and 2: every step is lr.
    {"name": "worked_example_adam", "kind": "example", "call": run_script,
     "inputs": script("Adam", [[1.0, 1.0]], [[[0.5, 2.0]]] * 3, lr=0.01)},
    # Public: AdamW shrinks theta = 3 by lr * wd * theta = 0.003 even with a zero gradient.
    {"name": "worked_example_adamw", "kind": "example", "call": run_script,
     "inputs": script("AdamW", [[3.0, 3.0]], [[[0.0, 0.5]]] * 2, lr=0.01, weight_decay=0.1)},

    {"name": "tiny_gradients", "kind": "edge", "call": run_script,
     "inputs": seeded("Adam", [(6,)], 1, scales=[1e-10], lr=0.01)},
    {"name": "huge_gradients", "kind": "edge", "call": run_script,
     "inputs": seeded("Adam", [(6,)], 2, scales=[1e5], lr=0.01)},
    {"name": "mixed_gradient_scales", "kind": "edge", "call": run_script,
     "inputs": seeded("Adam", [(12,)], 3, scales=[log_scales((12,), 3)], lr=0.01)},
    {"name": "several_parameters", "kind": "edge", "call": run_script,
     "inputs": seeded("Adam", [(2, 3), (4,), ()], 4, lr=0.01)},
    {"name": "one_parameter_sometimes_without_grad", "kind": "edge", "call": run_script,
     "inputs": seeded("Adam", [(5,)], 5, lr=0.01, none_every=[alternating(4, 3)])},
    {"name": "grad_none_and_never_updated", "kind": "edge", "call": run_script,
     "inputs": seeded("AdamW", [(3,), (3,), (2,)], 6, lr=0.01, weight_decay=0.1,
                      none_every=[None, alternating(5, 4), lambda t: True])},
    {"name": "adam_l2_weight_decay", "kind": "edge", "call": run_script,
     "inputs": seeded("Adam", [(4,), (3,)], 7, scales=[1.0, 1e-6], lr=0.05, weight_decay=0.1)},
    {"name": "adamw_decoupled_decay", "kind": "edge", "call": run_script,
     "inputs": seeded("AdamW", [(4,), (3,)], 8, scales=[1.0, 1e-6], lr=0.1, weight_decay=0.1)},
    {"name": "adam_defaults", "kind": "edge", "call": run_script,
     "inputs": seeded("Adam", [(4,)], 9)},
    {"name": "adamw_defaults", "kind": "edge", "call": run_script,
     "inputs": seeded("AdamW", [(4,)], 10)},
    {"name": "custom_betas_and_eps", "kind": "edge", "call": run_script,
     "inputs": seeded("Adam", [(5,)], 11, scales=[1e-3], lr=0.05, betas=(0.8, 0.95), eps=1e-4)},
    {"name": "float32_parameters", "kind": "edge", "call": run_script,
     "inputs": seeded("AdamW", [(3, 2), (4,)], 12, dtype=torch.float32, lr=0.01, weight_decay=0.05)},
    {"name": "training_loop", "kind": "edge", "call": training_loop,
     "inputs": loop_inputs("AdamW", 13, lr=0.05)},

    {"name": "random", "kind": "random", "call": run_script, "inputs": random_inputs,
     "sizes": [1, 4, 16, 64], "seeds": 2},
]


def entries(inputs):
    """Names for the entries of "params per step" (rows are parameters flattened in order), so a
    verdict says "param 1 (bias)[2]" instead of an offset into the row."""
    named = (list(inputs["model"].named_parameters()) if "model" in inputs
             else [("", p) for p in inputs["params"]])
    return {"params per step": [(f"param {i}" + (f" ({name})" if name else ""), list(p.shape))
                                for i, (name, p) in enumerate(named)]}


for _case in CASES:
    _case.setdefault("entries", entries)

