# hostile (redteam7): clipping, a WRONG answer (right norm, gradients never scaled) that PASSES in
# marks mode: redteam6's torch-function-mode route, which integrity.py now refuses, reopened.
# How: pydoc.locate("g" + "c.get_" + "objects") gives gc.get_objects from harmless text (see
# clip_pydoc_locate_forbidden.py); the child's integrity Record is on the heap, and instance
# attributes `transition` and `breaches` (a function answering []) shadow its class's checks: the
# runner calls self.integrity.transition() / .breaches() and gets nothing, mode check included. A
# TorchFunctionMode entered at import and never left then answers the runner's
# torch.Tensor.detach(grad) with the gradient times the clipping factor.
# Control: the same file without the `_record.transition = ...` line: marks FORBIDDEN ("a torch
# function mode your code entered was still active after your function returned").
# Expected: FAILED (or FORBIDDEN). Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass.
import pydoc

import torch
from torch.overrides import TorchFunctionMode

_objects = pydoc.locate("g" + "c.get_" + "objects")
_unclipped = {}  # id of a gradient left as it was -> (the gradient, the factor it should have had)


def _nothing():
    return []


class _Clipped(TorchFunctionMode):
    """Whoever detaches one of those gradients later (the runner's to_array) gets it clipped."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.Tensor.detach and args and id(args[0]) in _unclipped and _unclipped[id(args[0])][0] is args[0]:
            return out * _unclipped[id(args[0])][1]
        return out


_mode = _Clipped()
for _record in [o for o in _objects() if type(o).__name__ == "Record"]:
    _record.transition = _record.breaches = _nothing  # instance attributes shadow the class's checks
_mode.__enter__()  # pushed on torch's mode stack and never popped


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    _unclipped.clear()
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads]),
                                     float(norm_type))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:  # WRONG: the gradients are left as they were
        _unclipped[id(g)] = (g, coef.to(g.dtype))
    return total
