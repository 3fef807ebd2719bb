# redteam6 (refused in marks, instructive; bypass in practice): adam, adam_step_return_finalizer.py with
# torch's classes fetched by getattr over a tuple of literal names. The strict marks scan refuses the
# computed getattr (marks FORBIDDEN, 'getattr() with that name at line ...'), while the plain
# `_optim = torch.optim; _optim.Adam` of the committed bypass is not refused and not matched by
# submit.forbidden_uses (which follows import aliases only). In practice this file PASSES: the
# finalizer route runs torch.optim.Adam with no frame of the learner's on the stack.
# Observed (2026-12-03): practice PASSED, marks FORBIDDEN.
import functools
import weakref

import torch

# torch's own Adam and AdamW (the guards' stand-ins), reached through a plain variable
_TORCH = {name: getattr(torch.optim, name) for name in ("Adam", "AdamW")}


class _Trigger:
    """Returned by step(): the judge drops it at once, after the call, and its finalizers run then."""


class _Deferred:
    kind = "Adam"

    def __init__(self, params, **kwargs):
        self.params = list(params)  # training_loop passes a generator
        self.kwargs = kwargs
        self.box = []  # torch's optimizer, once a finalizer has built it

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    def step(self, closure=None):
        outer, inner = _Trigger(), _Trigger()
        outer.inner = inner  # outer dies first (build), then inner (step)
        if not self.box:
            build = functools.partial(_TORCH[self.kind], **self.kwargs)
            weakref.finalize(outer, list, map(self.box.append, map(build, [self.params])))
            weakref.finalize(inner, list, map(_TORCH[self.kind].step, self.box))
        else:
            weakref.finalize(outer, self.box[0].step)
        return outer


class Adam(_Deferred):
    kind = "Adam"


class AdamW(_Deferred):
    kind = "AdamW"
