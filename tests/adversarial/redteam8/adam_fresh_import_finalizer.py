# hostile (redteam8, REAL BYPASS of the marks poison AND the guards): adam, Adam and AdamW computed by
# torch's own functional adam() (torch/optim/adam.py: _single_tensor_adam), and which PASSES marks.
# How: a meta-path finder (a plain class with find_spec) makes an EMPTY package "grind_optim" whose
# folder is torch/optim/ (ModuleSpec and SourceFileLoader reached as type(torch.optim.__spec__) etc.,
# no importlib). `from grind_optim.adam import *` then imports torch/optim/adam.py a second time, and
# its relative imports (.optimizer) resolve inside the copy, so nothing in the real torch.optim is
# rebound (a first version under torch.optim.* rebound torch.optim.optimizer._single_tensor_adam via
# _disable_dynamo_if_unsupported's globals() write, and the integrity check refused it). The copy's
# functions were never poisoned. The functional adam() (first argument a plain list, so no "learner
# object" is its self: a fresh class would be a learner type) runs from a weakref.finalize on the
# object step() returns, after the harness dropped it (redteam6's deferral), past the guards, which
# know the copy's fingerprints but see no learner frame. Scan: star import, no forbidden leaf spelled.
# Control: _FRESH a no-op FAILS 0 of 16 (practice and marks).
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
from grind_optim.adam import *  # noqa: E402,F403  (the fresh copies, under their own names)

_FRESH = adam  # noqa: F405  (the fresh functional form: its first argument is a plain list)


class _Trigger:
    """Returned by step(): the judge drops it at once, after the call, and its finalizers run then."""


class _Deferred:
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)  # training_loop passes a generator
        self.hyper = dict(lr=lr, beta1=betas[0], beta2=betas[1], eps=eps, weight_decay=weight_decay,
                          amsgrad=False, maximize=False, foreach=False, capturable=False, differentiable=False,
                          fused=None, grad_scale=None, found_inf=None, has_complex=False,
                          decoupled_weight_decay=self.decoupled)
        self.state = {}

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    def step(self, closure=None):
        live = [p for p in self.params if p.grad is not None]
        for p in live:
            if id(p) not in self.state:
                self.state[id(p)] = (torch.zeros_like(p), torch.zeros_like(p), torch.zeros(()))
        states = [self.state[id(p)] for p in live]
        outer = _Trigger()
        # torch's adam() runs once step() has returned, from the finalizer, with no frame of this file
        weakref.finalize(outer, functools.partial(_FRESH, [p.data for p in live], [p.grad for p in live], [s[0] for s in states],
                                                  [s[1] for s in states], [], [s[2] for s in states], **self.hyper))
        return outer


class Adam(_Deferred):
    decoupled = False


class AdamW(_Deferred):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
