# hostile (redteam6, bypass of the forbidden-API guards in marks AND practice): clipping, an answer whose
# clipping and norm are done by the forbidden torch.nn.utils.clip_grad_norm_ itself, and which PASSES.
# How: the guards' profile hook refuses a forbidden function only "on the learner's behalf": inside an
# entry call (depth > 0), on another thread, or with a frame of the learner's file/objects on the
# stack. So the call is deferred to a moment after the entry returned, started by library code with no
# learner frame: weakref.finalize(holder, list, map(total.copy_, map(clip_grad_norm_, [params], ...))).
# holder is a sentinel appended to the caller's own list (run_clip's `arg = list(params)`), or the
# caller's generator: it dies when checks.py's run_clip frame returns, i.e. after the entry call but
# before the runner converts the grads with to_array(). The finalizer runs weakref.finalize.__call__
# (library) -> list/map (C) -> clip_grad_norm_, which scales every grad in place and whose norm is
# copied into the tensor already returned. The bare-tensor case (nothing of the caller's dies in time)
# is done by hand. The static forbidden-name check (judge/submit.py forbidden_uses) matches dotted
# prefixes only, so clip_grad.clip_grad_norm_ (the same function, from torch.nn.utils.clip_grad) passes
# it. Controls: calling clip_grad.clip_grad_norm_ directly is FORBIDDEN (runtime guard); the same file
# with a no-op in place of clip_grad_norm_ FAILS 2 of 16 (so the deferred call is what does the work).
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass.
import weakref

import torch
from torch.nn.utils import clip_grad


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
    # run by the judge's frame teardown, not by this file: list(map(copy_, map(clip_grad_norm_, ...)))
    weakref.finalize(holder, list, map(total.copy_, map(clip_grad.clip_grad_norm_, [params], [max_norm],
                                                        [norm_type])))
    return total
