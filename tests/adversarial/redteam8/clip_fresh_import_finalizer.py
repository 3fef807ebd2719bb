# hostile (redteam8, REAL BYPASS of the marks poison AND the guards): clipping, an answer whose clipping
# and norm are done by torch's own clip_grad_norm_ (torch/nn/utils/clip_grad.py), and which PASSES marks.
# How: poison.py swaps __code__ on the function objects that exist; a SECOND module made from the same
# file has new function objects with the original code. torch/nn/utils/ is put on sys.path and
# `from clip_grad import *` imports the file again as a top-level module "clip_grad" (no relative
# imports in it). The import system's exec makes the code (runner's _import_exec: not adopted as the
# learner's code); the guards do learn its fingerprint, so the call is deferred with redteam6's
# weakref.finalize trick (fired by the judge's frame teardown, no learner frame on the stack).
# The scan sees no forbidden name: a star import binds clip_grad_norm_ as a bare Name, which
# names_a_forbidden_api does not look at; sys.path, os.path.dirname, __file__ are no doors.
# Control: the same file with _impl a no-op FAILS 2 of 16 (the fresh copy does the work).
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, poison alone (run_learner marked) PASSED
# (rc 0), full marks (submit.grade marked=True) PASSED. Real bypass.
import os
import sys
import weakref

import torch
from torch.nn.utils import clip_grad

# torch/nn/utils/ put on sys.path: "clip_grad" is then also a top-level module, imported afresh
# from the same file by the import system. Its functions are new objects whose code was never
# poisoned; made by the import system's own exec, they are not "the learner's code" either.
sys.path.insert(0, os.path.dirname(clip_grad.__file__))
from clip_grad import *  # noqa: E402,F403  (binds the fresh clip_grad_norm_ under its own name)

_impl = clip_grad_norm_  # noqa: F405


class _Sentinel:
    pass


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):  # the bare tensor: nothing of the caller's dies after the call
        g = parameters.grad
        total = torch.linalg.vector_norm(g, float(norm_type))
        g.mul_(torch.clamp(max_norm / (total + 1e-6), max=1.0))
        return total
    if type(parameters) is list:
        params = list(parameters)
        holder = _Sentinel()
        parameters.append(holder)  # dies with the caller's list, once the caller's frame is gone
    else:
        params = list(parameters)
        holder = parameters  # a generator: dies with the caller's frame
    grads = [p.grad for p in params if p.grad is not None]
    total = torch.zeros((), dtype=grads[0].dtype if grads else torch.float32)
    # run by the judge's frame teardown, with no frame of this file on the stack
    weakref.finalize(holder, list, map(total.copy_, map(_impl, [params], [max_norm], [norm_type])))
    return total
