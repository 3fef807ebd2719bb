# hostile (redteam8, poison-alone GAP, caught by the guards): as clip_fresh_copy_from_loader.py, with the
# call deferred to a weakref.finalize (redteam6). Still refused: the copy's code was made by
# types.FunctionType from the learner's module frame, so the guards adopted it as learner code and a
# frame running it is "on the learner's behalf" wherever it is called from.
# Expected: FORBIDDEN. Observed (2026-12-03): practice FORBIDDEN, poison alone FORBIDDEN (guard, rc 0),
# full marks FORBIDDEN (guard). Not a bypass (the import-system copy in clip_fresh_import_finalizer.py is).
import types
import weakref

import torch
from torch.nn.utils import clip_grad

# A fresh copy of torch/nn/utils/clip_grad.py, made from its .pyc by the module's own loader,
# run into a plain dict: its functions are new objects whose code was never poisoned.
_ns = {"__name__": "torch.nn.utils._grind_copy", "__package__": "torch.nn.utils"}
types.FunctionType(clip_grad.__spec__.loader.get_code("torch.nn.utils.clip_grad"), _ns)()
_impl = _ns["clip_grad_" + "norm_"]


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
