# hostile (redteam6, bypass): rmsprop, the adam_step_return_finalizer.py route unchanged but for the class:
# RMSprop IS torch.optim.RMSprop, built and stepped from weakref finalizers of the object step() returns
# (the harness drops it right after the call, before it records the parameters). Shows the route is
# general to every optimizer exercise whose harness calls opt.step() as a statement.
# Expected: FORBIDDEN. Observed (2026-12-03): marks PASSED. Real bypass.
import functools
import weakref

import torch

# torch's own RMSprop (the guards' stand-ins), reached through a plain variable
_optim = torch.optim  # an alias the static check does not follow
_TORCH = {"RMSprop": _optim.RMSprop}


class _Trigger:
    """Returned by step(): the judge drops it at once, after the call, and its finalizers run then."""


class _Deferred:
    kind = "RMSprop"

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


class RMSprop(_Deferred):
    kind = "RMSprop"
