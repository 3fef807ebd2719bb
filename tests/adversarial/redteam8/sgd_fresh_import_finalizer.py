# hostile (redteam8, REAL BYPASS of the marks poison AND the guards): sgd-momentum, SGD computed by
# torch's own functional sgd() (torch/optim/sgd.py), imported a second time under the empty package
# "grind_optim" (see adam_fresh_import_finalizer.py) and called from a weakref.finalize after step()
# returned. Momentum buffers are the lists torch's sgd() fills in place, read back next step.
# Control: _FRESH a no-op FAILS 0 of 19.
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
from grind_optim.sgd import *  # noqa: E402,F403  (the fresh copies, under their own names)

_FRESH = sgd  # noqa: F405  (the fresh functional form: its first argument is a plain list)


class _Trigger:
    """Returned by step(): the judge drops it at once, after the call, and its finalizers run then."""


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)  # training_loop passes a generator
        self.hyper = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                          nesterov=nesterov, maximize=False, foreach=False, fused=None)
        self.buffers = {}
        self.pending = None

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    def step(self, closure=None):
        if self.pending is not None:  # the buffers torch's sgd() made in the last deferred call
            for p, buf in zip(*self.pending):
                self.buffers[id(p)] = buf
        live = [p for p in self.params if p.grad is not None]
        bufs = [self.buffers.get(id(p)) for p in live]
        self.pending = (live, bufs)
        outer = _Trigger()
        # torch's sgd() runs once step() has returned, from the finalizer, with no frame of this file
        weakref.finalize(outer, functools.partial(_FRESH, [p.data for p in live], [p.grad for p in live], bufs,
                                                  **self.hyper))
        return outer
