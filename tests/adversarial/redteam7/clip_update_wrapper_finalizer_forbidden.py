# hostile (redteam7, door-free bypass of names_a_forbidden_api and the runtime guard): clipping, an
# answer whose clipping and norm are done by the forbidden torch.nn.utils.clip_grad_norm_, which
# PASSES in marks mode, with no gc, pydoc, getattr or setattr in the file.
# How, three pieces:
# 1. The function is fetched without spelling its last name: functools.update_wrapper(w, module,
#    assigned=("clip_grad" + "_norm_",), updated=()) runs getattr(module, name) and then
#    setattr(w, name, value) in functools' frame, and w is the learner's object whose __setattr__
#    keeps the value (a method DEFINED under that name is no Attribute node for the scan).
# 2. The module is passed as a value without the scan knowing it is one: the rule "a module may only
#    be the base of an attribute read" looks each chain up as files, and
#    torch.nn.utils.clip_grad.torch.nn.utils (clip_grad.py's own `import torch`) names no file.
# 3. The call is made when the learner is no longer on the stack: weakref.finalize(holder, list,
#    map(total.copy_, map(fn, [params], ...))) fires when checks.py's run_clip frame drops the
#    caller's list (holder appended to it) or generator; the guard sees depth 0, the runner's thread,
#    and only weakref's and the judge's frames (redteam6's route, which the name check now refuses
#    only when the name is spelled). The bare-tensor case is done by hand.
# Controls: calling the fetched function directly in the entry: marks FORBIDDEN
# ("torch.nn.utils.clip_grad_norm_ (line 25)"); a no-op in its place in the finalizer: marks FAILED
# 2 of 16 (the deferred call does the work).
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass.
import functools
import weakref

import torch

_found = []


class _Catch:
    """update_wrapper's setattr(wrapper, name, value) lands here: the value, without spelling its name."""

    def __setattr__(self, name, value):
        _found.append(value)


functools.update_wrapper(_Catch(), torch.nn.utils.clip_grad.torch.nn.utils, assigned=("clip_grad" + "_norm_",), updated=())
_theirs = _found[0]  # torch's clip_grad_norm_ (the guard's stand-in for it)


class _Sentinel:
    pass


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):  # nothing of the caller's dies in time: by hand
        g = parameters.grad
        total = torch.linalg.vector_norm(g, float(norm_type))
        g.mul_(torch.clamp(max_norm / (total + 1e-6), max=1.0))
        return total
    params = list(parameters)
    if type(parameters) is list:
        holder = _Sentinel()
        parameters.append(holder)  # dies with the caller's list, when its frame returns
    else:
        holder = parameters  # the caller's generator: dies the same way
    grads = [p.grad for p in params if p.grad is not None]
    total = torch.zeros((), dtype=grads[0].dtype if grads else torch.float32)
    # run by weakref's frame when the caller's frame is gone: no learner frame, no learner call in progress
    weakref.finalize(holder, list, map(total.copy_, map(_theirs, [params], [max_norm], [norm_type])))
    return total
