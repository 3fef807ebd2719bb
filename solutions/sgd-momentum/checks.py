"""Cases for sgd-momentum: each builds fresh inputs and records named observations.

The same code runs against the learner, the reference, the oracle (torch.optim.SGD) and every
pitfall. Most cases drive the subject's optimizer through a fixed script of gradients, assigned
to ``p.grad`` directly so that missing gradients are exactly where the case puts them, and
record every parameter after every ``step()``: ``"params per step"`` has shape
[steps, total number of entries], so a report names the first step that went wrong.
Two cases run a real training loop on an nn.Linear instead: one clears the gradients with the
subject's ``zero_grad()``, the other zeroes them in place the way ``zero_grad(set_to_none=False)``
does, which is what exposes a velocity that shares memory with ``p.grad``.

No warm-up is needed here: these cases never build a torch optimizer for the learner's run.
Only the oracle is torch's own SGD, and it runs in the trusted child, off the learner's clock.
"""

import torch

STEPS = 30


def make_params(init, dtype=torch.float64):
    return [torch.nn.Parameter(torch.as_tensor(t, dtype=dtype).clone()) for t in init]


def flat(params):
    return torch.cat([p.detach().reshape(-1).clone() for p in params])


class UsesTorchOptimizer(Exception):
    """The submission handed back torch's own optimizer instead of its own."""


def construct(subject, params, kwargs):
    opt = subject.SGD(params, **kwargs)
    # The runtime guard trips only when the learner's own code calls torch.optim.SGD; an alias
    # made at import time (SGD = getattr(torch.optim, ...)) would be called from here instead.
    if type(opt) is torch.optim.SGD:
        raise UsesTorchOptimizer("SGD is torch.optim.SGD itself: this exercise asks you to write it")
    return opt


def run_script(subject, params, grads, kwargs):
    """Assign each step's gradients (None: no gradient this step), call step(), record."""
    opt = construct(subject, params, kwargs)
    rows = []
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = None if g is None else g.clone()
        opt.step()
        rows.append(flat(params))
    return {"params per step": torch.stack(rows)}


def script(init, grads, dtype=torch.float64, **kwargs):
    """A fixed case: ``init`` holds one list per parameter, ``grads`` one row per step with one
    entry per parameter (None for no gradient)."""
    def inputs():
        return {"params": make_params(init, dtype),
                "grads": [[None if g is None else torch.as_tensor(g, dtype=dtype) for g in row] for row in grads],
                "kwargs": dict(kwargs)}
    return inputs


def seeded(shapes, seed, steps=STEPS, none_when=None, dtype=torch.float64, **kwargs):
    """Random initial values and gradients. ``none_when[i]`` is a function step -> bool saying
    when parameter i has no gradient (None: it always has one)."""
    def inputs():
        gen = torch.Generator().manual_seed(seed)
        init = [torch.randn(s, generator=gen, dtype=torch.float64) for s in shapes]
        grads = []
        for t in range(steps):
            row = []
            for i, s in enumerate(shapes):
                g = torch.randn(s, generator=gen, dtype=torch.float64)
                skip = none_when is not None and none_when[i] is not None and none_when[i](t)
                row.append(None if skip else g.to(dtype))
            grads.append(row)
        return {"params": make_params(init, dtype), "grads": grads, "kwargs": dict(kwargs)}
    return inputs


def training_loop(subject, model, x, y, steps, kwargs, zero_in_place):
    """The usual loop on model.parameters() (a generator, as in real code). With
    ``zero_in_place`` the case zeroes each p.grad itself instead of calling zero_grad(), so
    backward() accumulates into the very same gradient tensors step after step (and the
    optimizer gets a list)."""
    params = list(model.parameters())
    # The in-place loop hands over a list: whether a kept generator runs dry in the first
    # zero_grad() or in __init__ or in the first step() is then told apart by no case, so every
    # way of keeping model.parameters() gets the same diagnosis (from the other loop).
    opt = construct(subject, list(params) if zero_in_place else model.parameters(), kwargs)
    rows, losses, cleared = [], [], []
    for _ in range(steps):
        if zero_in_place:
            for p in params:
                if p.grad is not None:
                    p.grad.zero_()
        else:
            opt.zero_grad()
            cleared.append(all(p.grad is None or not bool(p.grad.any()) for p in params))
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        rows.append(flat(params))
    observations = {"params per step": torch.stack(rows), "loss per step": losses}
    if not zero_in_place:
        observations["grads cleared by zero_grad per step"] = cleared
    return observations


def loop_inputs(seed, steps=20, zero_in_place=False, **kwargs):
    def inputs():
        gen = torch.Generator().manual_seed(seed)
        model = torch.nn.Linear(4, 3).double()
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64))
        x = torch.randn(16, 4, generator=gen, dtype=torch.float64)
        y = torch.randn(16, 3, generator=gen, dtype=torch.float64)
        return {"model": model, "x": x, "y": y, "steps": steps, "kwargs": dict(kwargs),
                "zero_in_place": zero_in_place}
    return inputs


def random_inputs(size, seed):
    """``size`` entries over up to three same-shaped parameters, 30 steps, hyperparameters
    drawn from the seed (Nesterov only with zero dampening, as torch requires), and the last
    parameter missing its gradient on some steps."""
    gen = torch.Generator().manual_seed(7919 * size + seed)
    pick = lambda options: options[int(torch.randint(0, len(options), (), generator=gen))]  # noqa: E731
    count = min(3, size)
    shapes = [(max(1, size // count),) for _ in range(count)]
    momentum = pick([0.0, 0.5, 0.9, 0.99])
    nesterov = momentum > 0 and seed % 2 == 1
    dampening = 0.0 if nesterov else pick([0.0, 0.1, 0.5])
    kwargs = {"lr": pick([0.01, 0.05, 0.1]), "momentum": momentum, "dampening": dampening,
              "weight_decay": pick([0.0, 0.01, 0.1]), "nesterov": nesterov}
    period = 2 + int(torch.randint(0, 4, (), generator=gen))
    none_when = [None] * count
    none_when[-1] = lambda t: t < 2 or t % period == 0
    return seeded(shapes, 31 * size + seed, none_when=none_when, **kwargs)()


def sometimes(start, period):
    """No gradient before step ``start`` and on every ``period``-th step."""
    return lambda t: t < start or t % period == 0


CASES = [
    # Public: constant gradient [1, -2], momentum 0.9: the velocity grows 1, 1.9, 2.71, 3.439 (toward 10).
    {"name": "worked_example", "kind": "example", "call": run_script,
     "inputs": script([[0.0, 0.0]], [[[1.0, -2.0]]] * 4, lr=0.1, momentum=0.9)},
    # Public: dampening 0.5 is not applied on the first step (velocity 1, 1.4, 1.76).
    {"name": "worked_example_dampening", "kind": "example", "call": run_script,
     "inputs": script([[0.0]], [[[1.0]]] * 3, lr=0.1, momentum=0.9, dampening=0.5)},

    {"name": "plain_sgd_defaults", "kind": "edge", "call": run_script,
     "inputs": seeded([(5,)], 1, lr=0.1)},
    # Every argument left at its default, lr = 1e-3 included: SGD(params) alone.
    {"name": "all_arguments_default", "kind": "edge", "call": run_script,
     "inputs": seeded([(5,)], 15)},
    {"name": "no_momentum_with_weight_decay", "kind": "edge", "call": run_script,
     "inputs": seeded([(5,)], 2, lr=0.1, weight_decay=0.1)},
    {"name": "no_momentum_ignores_dampening", "kind": "edge", "call": run_script,
     "inputs": seeded([(4,)], 3, lr=0.1, dampening=0.5)},
    {"name": "constant_gradient_reaches_10x", "kind": "edge", "call": run_script,
     "inputs": script([[0.0]], [[[1.0]]] * 60, lr=0.01, momentum=0.9)},
    {"name": "dampening", "kind": "edge", "call": run_script,
     "inputs": seeded([(5,)], 4, lr=0.05, momentum=0.9, dampening=0.3)},
    {"name": "nesterov", "kind": "edge", "call": run_script,
     "inputs": seeded([(5,)], 5, lr=0.05, momentum=0.9, nesterov=True)},
    {"name": "weight_decay_with_momentum", "kind": "edge", "call": run_script,
     "inputs": seeded([(5,)], 6, lr=0.05, momentum=0.9, weight_decay=0.1)},
    {"name": "nesterov_with_weight_decay", "kind": "edge", "call": run_script,
     "inputs": seeded([(5,)], 7, lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.05)},
    {"name": "several_parameters_same_shape", "kind": "edge", "call": run_script,
     "inputs": seeded([(3,), (3,), (3,)], 8, lr=0.05, momentum=0.9)},
    {"name": "mixed_shapes_and_scalar", "kind": "edge", "call": run_script,
     "inputs": seeded([(2, 3), (4,), ()], 9, lr=0.05, momentum=0.9, dampening=0.1)},
    {"name": "parameter_sometimes_without_grad", "kind": "edge", "call": run_script,
     "inputs": seeded([(4,)], 10, lr=0.05, momentum=0.9, none_when=[sometimes(3, 3)])},
    {"name": "late_first_gradient_and_never", "kind": "edge", "call": run_script,
     "inputs": seeded([(3,), (2,), (2,)], 11, lr=0.05, momentum=0.9, weight_decay=0.05,
                      none_when=[None, lambda t: t < 5, lambda t: True])},
    {"name": "float32_parameters", "kind": "edge", "call": run_script,
     "inputs": seeded([(3, 2), (4,)], 12, dtype=torch.float32, lr=0.05, momentum=0.9, dampening=0.1,
                      weight_decay=0.01)},
    {"name": "training_loop", "kind": "edge", "call": training_loop,
     "inputs": loop_inputs(13, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)},
    {"name": "grads_zeroed_in_place", "kind": "edge", "call": training_loop,
     "inputs": loop_inputs(14, zero_in_place=True, lr=0.05, momentum=0.9, dampening=0.1)},

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
