"""Cases for the loss-scaling exercise.

Every case drives the learner's ``LossScaler`` through a mixed-precision training loop:

    scaled = scaler.scale(loss); scaled.backward()      # or the fast path below
    found_inf = scaler.unscale_(optimizer)              # only in cases that unscale explicitly
    scaler.step(optimizer)
    scaler.update()

and records, per step, the scale after ``update()``, whether the optimizer really stepped (the
kit's recording optimizer, grind_kit.RecordingSGD, counts its calls), ``unscale_``'s answer, the
gradients the optimizer saw and the parameters after the step.

Two ways to get gradients:

- ``autograd``: a real forward and backward through ``scale(loss)``; the loss is ``sum(w * x)``
  (float32), or with ``fp16=True`` the product runs in float16 like an autocast region, so a
  large scale overflows inside the backward pass although ``x`` itself is finite.
- ``fast``: the long and random cases skip autograd (thousands of steps must stay cheap). For
  ``loss = sum(w * x)`` the gradient of the scaled loss is ``S * x``, so the case asks the
  scaler for ``scale(x)`` and rounds it through float16, exactly what an fp16 backward would
  store. Injected ``inf``/``nan`` entries stand for a bad batch.
"""

import torch

from grind_kit import RecordingSGD, case, flat

# Special values are written as strings in the case inputs ("inf", "-inf", "nan") so that the
# report can show them; decode() turns them into floats.
SPECIAL = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


def decode(value):
    if isinstance(value, list):
        return [decode(v) for v in value]
    return SPECIAL[value] if isinstance(value, str) else float(value)


def snapshot(value):
    """A plain tensor the subject may mutate later (a scale or found_inf kept in place) is
    copied now; anything else goes to the runner untouched, to be converted strictly there."""
    return value.clone() if type(value) is torch.Tensor else value


def train(subject, batches, scaler_kwargs, shapes=((2,),), groups=None, unused=False, unscale="always",
          path="autograd", fp16=False, lr=0.1, initial=False, inject=(), light=False):
    """Run one training loop and return the observations.

    batches: per step, one list of true gradients (one per shape; nested lists or tensors).
    groups: how the parameters are split into param groups (default: one group).
    unused: add a parameter that the loss never touches, so its .grad stays None.
    unscale: "always" (call unscale_ before step), "never", or "alternate" (steps 0, 2, 4, ...).
    inject: (step, flat index into the first gradient, "inf" | "-inf" | "nan") bad values to plant.
    Steps are numbered from 0, like the judge's messages.
    light: record gradients and parameters only at the end (long runs stay fast).
    """
    planted = {}
    for step, index, token in inject:
        planted.setdefault(step, []).append((index, SPECIAL[token]))
    params = [torch.zeros(s, requires_grad=True) for s in shapes]
    grouped = [params[a:b] for a, b in groups] if groups else [params]
    if unused:
        grouped[-1] = grouped[-1] + [torch.zeros(3, requires_grad=True)]
    opt = RecordingSGD([{"params": group} for group in grouped], lr=lr, record=False)
    scaler = subject.LossScaler(**scaler_kwargs)
    obs = {}
    if initial:
        obs["initial scale"] = snapshot(scaler.get_scale())
    scales, taken, found, grads, values, losses = [], [], [], [], [], []
    for step, batch in enumerate(batches):
        # inputs() builds fresh tensors for every subject, so planting bad values in place is safe
        xs = [torch.tensor(decode(x), dtype=torch.float32) if isinstance(x, list) else x for x in batch]
        for index, value in planted.get(step, []):
            xs[0].view(-1)[index] = value
        opt.zero_grad()
        if path == "autograd":
            if fp16:
                # autocast-style region: the product runs in float16, the loss is float32
                loss = sum((p.half() * x.half()).float().sum() for p, x in zip(params, xs))
            else:
                loss = sum((p * x).sum() for p, x in zip(params, xs))
            scaled = scaler.scale(loss)
            losses.append(scaled)
            scaled.backward()
        else:
            for p, x in zip(params, xs):
                # d(S * sum(w * x))/dw = S * x, stored by a float16 backward pass
                p.grad = scaler.scale(x).to(torch.float16).to(torch.float32)
        if unscale == "always" or (unscale == "alternate" and step % 2 == 0):
            found.append(snapshot(scaler.unscale_(opt)))
        calls = opt.calls
        scaler.step(opt)
        taken.append(opt.calls > calls)
        if not light:
            grads.append(flat([p.grad for p in params]))
            values.append(flat(params))
        scaler.update()
        scales.append(snapshot(scaler.get_scale()))
    obs["scale per step"] = scales
    obs["step taken per step"] = taken
    if found:
        obs["found_inf per unscale_ call"] = found
    if light:
        obs["final grads"] = flat([p.grad for p in params])
        obs["final params"] = flat(params)
    else:
        obs["grads per step"] = grads
        obs["params per step"] = values
    if losses:
        obs["scaled loss per step"] = losses
    if unused:
        obs["unused param grad stays None"] = grouped[-1][-1].grad is None
    return obs


def fixed(batches, shapes=((2,),), **options):
    def inputs():
        return {"batches": batches, "shapes": shapes, **options}
    return inputs


def clean(*values):
    return [list(values)]


C = clean(1.0, -2.0)            # an ordinary batch
X = clean("inf", 1.0)           # a batch whose gradient overflowed
N = clean("nan", 1.0)           # a batch whose gradient is NaN
M = clean(3.0, "-inf")          # negative infinity


def long_run_inputs():
    """Default settings for 2100 steps: an inf at step 4 and a NaN at step 39 (backing off to
    2**14), then 2000 clean steps, so the first growth lands on step 2039."""
    gen = torch.Generator().manual_seed(7)
    xs = torch.randn(2100, 4, generator=gen) * 0.01
    return {"batches": [[x] for x in xs], "inject": [(4, 1, "inf"), (39, 2, "nan")], "shapes": ((4,),),
            "scaler_kwargs": {}, "path": "fast", "unscale": "alternate", "initial": True, "light": True}


def fp16_inputs():
    """Finite gradients of about 6 that overflow float16 only once multiplied by the scale."""
    xs = [[6.0, -1.5, 0.25, 2.0], [-5.5, 1.0, 3.0, -0.125], [4.0, 6.5, -2.0, 1.0]]
    return {"batches": [[xs[i % 3]] for i in range(14)], "shapes": ((4,),),
            "scaler_kwargs": {"growth_interval": 3}, "fp16": True, "initial": True}


def random_inputs(size, seed):
    """``size`` steps of a self-regulating fp16 run: a random scale configuration, gradients of
    random magnitude that overflow float16 when the scale is too large, and a few bad batches."""
    gen = torch.Generator().manual_seed(10_000 * size + seed)

    def pick(options):
        return options[int(torch.randint(len(options), (), generator=gen))]

    growth, backoff = pick([(2.0, 0.5), (4.0, 0.25), (2.0, 0.25), (8.0, 0.5)])
    kwargs = {"init_scale": 2.0 ** int(torch.randint(4, 21, (), generator=gen)), "growth_factor": growth,
              "backoff_factor": backoff, "growth_interval": pick([1, 2, 3, 5, 8])}
    n1, n2 = 1 + (size + seed) % 4, 2
    magnitude = 10.0 ** float(torch.empty(()).uniform_(-3, 0.5, generator=gen))
    batches, inject = [], []
    for step in range(size):
        batches.append([torch.randn(n1, generator=gen) * magnitude,
                        torch.randn(2, n2, generator=gen) * magnitude])
        if float(torch.rand((), generator=gen)) < 0.08:
            inject.append((step, int(torch.randint(n1, (), generator=gen)), pick(["inf", "-inf", "nan"])))
    return {"scaler_kwargs": kwargs, "unscale": pick(["always", "never", "alternate"]), "inject": inject,
            "batches": batches, "shapes": ((n1,), (2, n2)), "path": "fast", "initial": True}


def call(subject, batches, scaler_kwargs, **options):
    return train(subject, batches, scaler_kwargs, **options)


def entries(inputs):
    """Names for the entries of the flattened gradients and parameters (the parameters in the
    order of ``shapes``), so a verdict says "param 1[0, 2]" instead of an offset."""
    pieces = [(f"param {i}", list(shape)) for i, shape in enumerate(inputs.get("shapes", ((2,),)))]
    return {key: pieces for key in ("grads per step", "params per step", "final grads", "final params")}


call.entries = entries  # every case below calls call(): grind_kit.case takes its entries from it


EXAMPLE = {"init_scale": 1024.0, "growth_interval": 3}

CASES = [
    case("worked_example", "example", inputs=fixed([C, C, C, C, C, X, C, C, C, C], scaler_kwargs=EXAMPLE),
         call=call, shown=["scale per step", "step taken per step"]),
    case("nan_gradient",
         inputs=fixed([C, N, C, C, C, C], scaler_kwargs={"init_scale": 256.0, "growth_interval": 2}), call=call),
    case("negative_inf_gradient",
         inputs=fixed([C, M, C, C], scaler_kwargs={"init_scale": 256.0, "growth_interval": 2}), call=call),
    case("overflow_at_growth_boundary", inputs=fixed([C, C, X, C, C, C, C], scaler_kwargs=EXAMPLE), call=call),
    case("consecutive_overflows",
         inputs=fixed([X, N, X, C, C, C], scaler_kwargs={"init_scale": 1024.0, "growth_interval": 2}), call=call),
    case("step_unscales_by_itself",
         inputs=fixed([C, C, X, C, C, C], scaler_kwargs={"init_scale": 64.0, "growth_interval": 2},
                      unscale="never"), call=call),
    case("unscale_only_on_some_steps",
         inputs=fixed([C, C, C, X, C, C, C], scaler_kwargs={"init_scale": 64.0, "growth_interval": 2},
                      unscale="alternate"), call=call),
    case("custom_factors",
         inputs=fixed([C, C, C, X, C, C], scaler_kwargs={"init_scale": 100.0, "growth_factor": 3.0,
                                                         "backoff_factor": 0.25, "growth_interval": 2}),
         call=call),
    case("growth_interval_one",
         inputs=fixed([C, C, X, C, C], scaler_kwargs={"init_scale": 8.0, "growth_interval": 1}), call=call),
    case("groups_and_a_missing_grad",
         inputs=fixed([[[1.0, 2.0], [[0.5]]], [[-1.0, 4.0], [["inf"]]], [[2.0, 2.0], [[-3.0]]]] * 2,
                      shapes=((2,), (1, 1)), groups=((0, 1), (1, 2)), unused=True,
                      scaler_kwargs={"init_scale": 512.0, "growth_interval": 2}), call=call),
    # the first gradient is entirely inf or NaN and a finite one follows it: it must be unscaled too
    case("overflow_before_a_finite_gradient",
         inputs=fixed([[[1.0], [2.0, -4.0]], [["inf"], [2.0, -4.0]], [[1.0], [2.0, -4.0]], [["nan"], [6.0, 1.0]],
                       [[1.0], [2.0, -4.0]]],
                      shapes=((1,), (2,)), scaler_kwargs={"init_scale": 128.0, "growth_interval": 2}), call=call),
    # no ceiling: the scale keeps doubling past 2**24
    case("large_scale_keeps_growing",
         inputs=fixed([C] * 6, scaler_kwargs={"init_scale": 2.0 ** 22, "growth_interval": 1}, initial=True),
         call=call),
    case("fp16_overflow_after_scaling", inputs=fp16_inputs, call=call),
    case("defaults_long_run", inputs=long_run_inputs, call=call),
    case("random", "random", inputs=random_inputs, call=call, sizes=[3, 8, 20, 60, 150], seeds=2),
]
