# hostile (redteam6, bypass with NO library write at all): clipping, a WRONG answer (right norm, no
# gradient ever scaled) that passes in marks mode.
# How: torch's function-mode stack is interpreter state in torch's C extension, not a namespace:
# entering a TorchFunctionMode (mode.__enter__(), never exited) pushes the learner's object there and
# every later torch call made by anyone in the process - the judge's included - goes through its
# __torch_function__. The runner's to_array() guards against tensor SUBCLASSES with
# torch._C.DisableTorchFunctionSubclass(), which does not switch modes off, and converts each
# observed p.grad with torch.Tensor.detach(value): the mode answers that detach with the gradient
# times the clipping factor the learner computed but never applied. integrity.py records module and
# class namespaces only; the scan sees a method call on the learner's own object.
# Control: the same file without the __enter__() line: marks FAILED 3 of 16.
# Expected: FAILED. Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass. The same mode
# sees every torch op of checks.py (flat() in the optimizer exercises, _state() in rank0-checkpoint).
import torch
from torch.overrides import TorchFunctionMode

_unclipped = {}  # id of a gradient left as it was -> (the gradient, the factor it should have had)


class _Clipped(TorchFunctionMode):
    """Whoever detaches one of those gradients later gets it clipped."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func is torch.Tensor.detach and args and id(args[0]) in _unclipped:
            grad, coef = _unclipped[id(args[0])]
            if grad is args[0]:
                return out * coef
        return out


_mode = _Clipped()
_entered = []


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if not _entered:
        _mode.__enter__()  # pushed on torch's C mode stack, never popped: no attribute of anything written
        _entered.append(True)
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
