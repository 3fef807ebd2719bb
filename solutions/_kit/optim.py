"""Optimizers in lockstep: a fixed script of gradients, one ``step()`` per row, every parameter
recorded after every step.

Gradients are assigned to ``p.grad`` directly, so tiny, huge and missing (``None``) gradients
are exactly where the case puts them, and ``"params per step"`` has shape [steps, entries]: a
report then names the first step that went wrong, not just "the final weights differ".
"""

import torch

STEPS = 30


class UsesTorchOptimizer(Exception):
    """The submission handed back torch's own optimizer instead of its own."""


def make_params(init, dtype=torch.float64):
    """One ``nn.Parameter`` per entry of ``init`` (numbers, nested lists or tensors), copied."""
    return [torch.nn.Parameter(torch.as_tensor(t, dtype=dtype).clone()) for t in init]


def flat(tensors):
    """Every tensor flattened and concatenated, detached and copied: one row of a record."""
    return torch.cat([t.detach().reshape(-1).clone() for t in tensors])


def entry_name(subject, optimizer=None):
    """The entry point to construct: ``optimizer`` when the case names one (an exercise with
    several, like Adam and AdamW), otherwise the exercise's only entry point."""
    if optimizer is not None:
        return optimizer
    names = list(vars(subject))
    if len(names) != 1:
        raise ValueError(f"this exercise has the entry points {', '.join(names)}: the case's inputs must say "
                         "which one to construct (optimizer=...)")
    return names[0]


def construct(subject, params, kwargs, optimizer=None):
    """``subject.<optimizer>(params, **kwargs)``, refusing an instance of torch's own optimizer.

    The runtime guard trips only when the learner's own code calls a forbidden class; an alias
    made at import time (``SGD = getattr(torch.optim, ...)``) is called from here instead, so the
    type of what comes back is checked. Subclasses (the oracle's ``class SGD(torch.optim.SGD)``)
    are the author's or the learner's own classes and pass."""
    name = entry_name(subject, optimizer)
    opt = getattr(subject, name)(params, **kwargs)
    if type(opt).__module__.split(".")[0] == "torch":
        raise UsesTorchOptimizer(f"{name} is torch.optim.{type(opt).__name__} itself: this exercise asks you "
                                 "to write it")
    return opt


def param_entries(*keys):
    """An ``entries`` function for observations whose rows are the parameters flattened in order
    (``keys``, e.g. "params per step"): it names each piece "param 1" for a list of parameters
    (``inputs["params"]``), "param 1 (bias)" for a model's (``inputs["model"]``), with its shape,
    so a verdict says "param 1 (bias)[2]" instead of an offset into the row."""
    def entries(inputs):
        named = (list(inputs["model"].named_parameters()) if "model" in inputs
                 else [("", p) for p in inputs["params"]])
        pieces = [(f"param {i}" + (f" ({name})" if name else ""), list(p.shape))
                  for i, (name, p) in enumerate(named)]
        return {key: pieces for key in keys}
    return entries


def lockstep(subject, params, grads, kwargs, optimizer=None):
    """The case's ``call``: construct the subject's optimizer on ``params``, then for each row of
    ``grads`` assign the gradients (``None``: no gradient this step), ``step()`` and record."""
    opt = construct(subject, params, kwargs, optimizer)
    rows = []
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = None if g is None else g.clone()
        opt.step()
        rows.append(flat(params))
    return {"params per step": torch.stack(rows)}


# What a case that calls lockstep gets as "entries" unless it says otherwise (see grind_kit.case).
lockstep.entries = param_entries("params per step")


def _named(optimizer, **built):
    return built if optimizer is None else {"optimizer": optimizer, **built}


def script(init, grads, dtype=torch.float64, optimizer=None, **kwargs):
    """Inputs for :func:`lockstep` written out: ``init`` holds one value per parameter, ``grads``
    one row per step with one gradient (or None) per parameter; ``kwargs`` go to the optimizer."""
    def inputs():
        rows = [[None if g is None else torch.as_tensor(g, dtype=dtype) for g in row] for row in grads]
        return _named(optimizer, params=make_params(init, dtype), grads=rows, kwargs=dict(kwargs))
    return inputs


def seeded(shapes, seed, steps=STEPS, scales=None, none_when=None, dtype=torch.float64, optimizer=None,
           **kwargs):
    """Inputs for :func:`lockstep` drawn from ``seed``: standard normal initial values and
    gradients, one parameter per shape, in float64 (then cast to ``dtype``).

    ``scales[i]`` multiplies parameter i's gradients (a number, or a tensor of per-entry scales);
    ``none_when[i]`` is a function step -> bool saying when parameter i has no gradient (None:
    it always has one)."""
    def inputs():
        gen = torch.Generator().manual_seed(seed)
        init = [torch.randn(s, generator=gen, dtype=torch.float64) for s in shapes]
        rows = []
        for t in range(steps):
            row = []
            for i, s in enumerate(shapes):
                g = torch.randn(s, generator=gen, dtype=torch.float64)
                if scales is not None:
                    g = g * scales[i]
                skip = none_when is not None and none_when[i] is not None and none_when[i](t)
                row.append(None if skip else g.to(dtype))
            rows.append(row)
        return _named(optimizer, params=make_params(init, dtype), grads=rows, kwargs=dict(kwargs))
    return inputs


def log_scales(shape, seed, low=-10.0, high=5.0):
    """Per-entry gradient scales spread log-uniformly from 10**low to 10**high."""
    gen = torch.Generator().manual_seed(seed)
    return 10.0 ** (torch.rand(shape, generator=gen, dtype=torch.float64) * (high - low) + low)


def sometimes(start, period):
    """For ``none_when``: no gradient before step ``start`` and on every ``period``-th step."""
    return lambda t: t < start or t % period == 0


class OptimizerPlumbing:
    """The plumbing a hand-written optimizer in a pitfalls file shares with every other one:
    ``params`` kept as a list, ``zero_grad`` setting each gradient to None, a gradient read
    as ``p.grad`` (None: skip the parameter). Mistakes in this plumbing are the same whatever
    the algorithm, so they live here once too: :func:`plumbing_pitfalls`.

    A pitfalls file's ``_Base`` inherits it and sets ``self.params = self._keep(params)``. No
    algorithm is here, so a learner who imports it gains nothing."""

    def _keep(self, params):
        return list(params)

    def _iter(self):
        return self.params

    def zero_grad(self):
        for p in self._iter():
            p.grad = None

    def _grad(self, p):
        return p.grad  # None: skip this parameter


def _keep_generator(self, params):
    return params  # model.parameters() is a generator: the first loop over it empties it


def _zero_grad_assumes_tensor(self):
    for p in self._iter():
        p.grad.zero_()  # AttributeError: a gradient that is still None has no zero_()


_PLUMBING_PITFALLS = {
    "params-generator-consumed": {
        "slug": "params-generator-consumed",
        "name": "keeping the parameter generator",
        "delta": {"_keep": _keep_generator},
        "explanation": "The optimizer stored model.parameters() as given. That is a generator: the first loop over "
                       "it (here zero_grad) used it up, and every later loop saw no parameters at all, so nothing "
                       "was ever updated. Turn the parameters into a list once, in the constructor.",
        "hint": "self.params = list(params).",
    },
    "zero-grad-on-none": {
        "slug": "zero-grad-on-none",
        "name": "zero_grad that fails on a missing gradient",
        "delta": {"zero_grad": _zero_grad_assumes_tensor},
        "explanation": "zero_grad called p.grad.zero_() on every parameter. Before the first backward() "
                       "every .grad is None, so the first call raised AttributeError. torch's zero_grad "
                       "sets each gradient to None (or zeroes it only when it is not None).",
        "hint": "for p in self.params: p.grad = None (or: if p.grad is not None: p.grad.zero_()).",
    },
}


def plumbing_pitfalls(*slugs):
    """The pitfall entries (deltas of :class:`OptimizerPlumbing`) for the plumbing mistakes named,
    to splice into a pitfalls file's list: ``*plumbing_pitfalls("zero-grad-on-none")``. Each
    call returns fresh dicts, so an exercise may adjust its copy."""
    return [dict(_PLUMBING_PITFALLS[slug], delta=dict(_PLUMBING_PITFALLS[slug]["delta"])) for slug in slugs]
