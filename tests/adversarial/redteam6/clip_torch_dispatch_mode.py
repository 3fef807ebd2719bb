# hostile (redteam6, bypass with NO library write at all): clipping, the clip_torch_function_mode.py wrong
# answer (no gradient scaled) one level lower: a TorchDispatchMode entered and never exited sits on
# torch's C dispatch-mode stack and sees every aten operator anyone runs, the judge's to_array()
# included (torch.Tensor.detach -> aten.detach.default), and returns the clipped values there.
# Why a second file: the obvious fix for the function mode, running the judge's conversions under
# torch._C.DisableTorchFunction() (which does switch function modes off, unlike the
# DisableTorchFunctionSubclass the runner uses), does not stop this one (checked in-process: a
# dispatch mode still doubles detach under DisableTorchFunction). A fix has to look at both stacks
# (torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack(): 0 when the record is
# taken) after every learner call, like the thread check.
# Expected: FAILED. Observed (2026-12-03): marks PASSED. Real bypass.
import torch
from torch.utils._python_dispatch import TorchDispatchMode

_unclipped = {}  # data pointer of a gradient left as it was -> the factor it should have had


class _Clipped(TorchDispatchMode):
    """Below torch functions, at the operator level: whoever detaches one of those gradients gets it clipped."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten.detach.default and type(args[0]) is torch.Tensor:
            coef = _unclipped.get(args[0].data_ptr())
            if coef is not None:
                return out * coef
        return out


_mode = _Clipped()
_entered = []


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if not _entered:
        _mode.__enter__()  # on torch's C dispatch-mode stack for good
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
        _unclipped[g.data_ptr()] = coef.to(g.dtype)
    return total
