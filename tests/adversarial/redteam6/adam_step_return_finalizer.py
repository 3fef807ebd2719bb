# hostile (redteam6, bypass of the forbidden-API guards in marks AND practice): adam, an answer whose
# Adam and AdamW ARE torch.optim.Adam / torch.optim.AdamW, and which PASSES.
# How: as in clip_finalizer_deferred_forbidden.py, the guards refuse a forbidden class or function only
# when the call is made on the learner's behalf (inside an entry call, on another thread, or with a
# frame of the learner's file or a method of a learner object on the stack). The harness
# (solutions/_kit/optim.py lockstep, _kit/training.py training_loop) calls `opt.step()` as a statement
# and drops what it returns: step() returns a fresh object carrying weakref.finalize callbacks, so
# torch's optimizer is built (first step) and stepped right after step() returned, from
# weakref.finalize.__call__ -> list/map/functools.partial (C) -> torch, with only the judge's frames
# below (lockstep's first argument is the judge's subject namespace, not a learner object). The
# parameters are recorded by flat(params) on the next line, after the update. The judge never sees a
# torch optimizer (construct() checks only what the entry returns). The static check
# (submit.forbidden_uses) follows import aliases only, so `_optim = torch.optim; _optim.Adam` is no
# forbidden dotted name; in marks, a literal getattr in a comprehension was refused, this is not.
# Control: the same delegation done inside __init__/step (adamdirect in the report) is FORBIDDEN
# ('torch.optim.Adam (line 8)').
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass.
import functools
import weakref

import torch

# torch's own Adam and AdamW (the guards' stand-ins), reached through a plain variable
_optim = torch.optim  # an alias the static check does not follow
_TORCH = {"Adam": _optim.Adam, "AdamW": _optim.AdamW}


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
