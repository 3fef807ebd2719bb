# hostile (redteam8, REAL BYPASS of the marks poison AND the guards): rmsprop, RMSprop (momentum and
# centered included) computed by torch's own functional rmsprop() (torch/optim/rmsprop.py), imported a
# second time under the empty package "grind_optim" (see adam_fresh_import_finalizer.py) and called
# from a weakref.finalize after step() returned.
# Control: _FRESH a no-op FAILS 0 of 25.
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, poison alone PASSED (rc 0), full marks
# PASSED. Real bypass.
import functools
import os
import sys
import weakref

import torch

# A meta-path finder that makes an empty package "grind_optim" whose folder is torch/optim/: its
# submodules are then torch's files imported a second time by the ordinary import system, with
# relative imports kept inside the copy (grind_optim.adam's ".optimizer" is grind_optim.optimizer,
# so nothing of the real torch.optim is written to). The copies' functions are new objects that were
# never poisoned, made by the import system's own exec (so not "the learner's code" either).
_SPEC = torch.optim.__spec__
_DIR = os.path.dirname(_SPEC.origin)  # torch/optim/


class _Empty:
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        pass


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name != "grind_optim":
            return None
        spec = type(_SPEC)(name, _Empty(), is_package=True)
        spec.submodule_search_locations.append(_DIR)
        return spec


sys.meta_path.insert(0, _Finder())
from grind_optim.rmsprop import *  # noqa: E402,F403  (the fresh copies, under their own names)

_FRESH = rmsprop  # noqa: F405  (the fresh functional form: its first argument is a plain list)


class _Trigger:
    """Returned by step(): the judge drops it at once, after the call, and its finalizers run then."""


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)  # training_loop passes a generator
        self.hyper = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                          centered=centered, foreach=False, maximize=False, differentiable=False,
                          capturable=False, has_complex=False)
        self.state = {}

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    def step(self, closure=None):
        live = [p for p in self.params if p.grad is not None]
        for p in live:
            if id(p) not in self.state:
                self.state[id(p)] = (torch.zeros_like(p), torch.zeros_like(p), torch.zeros_like(p), torch.zeros(()))
        st = [self.state[id(p)] for p in live]
        outer = _Trigger()
        # torch's rmsprop() runs once step() has returned, from the finalizer, with no frame of this file
        weakref.finalize(outer, functools.partial(_FRESH, [p.data for p in live], [p.grad for p in live],
                                                  [s[0] for s in st], [s[1] for s in st], [s[2] for s in st],
                                                  [s[3] for s in st], **self.hyper))
        return outer
