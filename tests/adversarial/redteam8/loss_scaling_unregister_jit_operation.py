# hostile (redteam8, REAL BYPASS of the marks poison and the guards): loss-scaling, a LossScaler whose
# non-finite check + unscale and whose scale update are torch's own amp kernels
# (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_: what GradScaler runs on CPU), and
# which PASSES marks.
# How: (1) the poison's Library is unregistered through weakref.finalize._registry (see
# adam_unregister_poison_kernels.py); (2) both operators are reached through
# torch._C._jit_get_operation("aten::..."), which returns a NEW builtin on every call, so the guards'
# identity table of known C builtins (every listed overload's _op) never matches it. The scan: the
# operator names are built from two literals, neither equal to a forbidden leaf; _jit_get_operation
# and _registry are in no list.
# Control: the same file without the unregistering call is FORBIDDEN by the poison in marks (rc 106,
# "torch._C._VariableFunctions._amp_foreach_non_finite_check_and_unscale_"); in PRACTICE that control
# PASSES (the guards never see a _jit_get_operation builtin: a practice bypass on its own).
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, poison alone PASSED (rc 0), full marks
# PASSED. Real bypass.
import weakref

import torch

# 1. The poison's aten kernels (a torch.library.Library) are unregistered through torch.library's own
#    destructor, found in weakref.finalize's class-level registry (see adam_unregister_poison_kernels.py).
for _finalizer, _info in list(weakref.finalize._registry.items()):
    if _info.func is torch.library._del_library and any("/_amp_" in key for key in _info.args[1]):
        _finalizer()

# 2. torch's own CPU kernels for the two operators GradScaler is built on, reached through
#    torch._C._jit_get_operation: it hands out a NEW builtin for the operator on every call, so the
#    guards' table of known C builtins (the _op of every listed overload) never contains it, and the
#    profile hook's c_call check finds nothing. The operator names are texts no scan rule matches.
_UNSCALE, _ = torch._C._jit_get_operation("aten::_amp_foreach_non_finite_check_and_" + "unscale_")
_UPDATE, _ = torch._C._jit_get_operation("aten::_amp_update_" + "scale_")


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._scale = torch.full((1,), float(init_scale))
        self._tracker = torch.zeros(1, dtype=torch.int32)
        self._growth, self._backoff, self._interval = growth_factor, backoff_factor, growth_interval
        self._found = None

    def scale(self, loss):
        return loss * self._scale[0].to(loss.dtype)

    def unscale_(self, optimizer):
        found = torch.zeros(1)
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        if grads:
            with torch.no_grad():
                _UNSCALE(grads, found, (1.0 / self._scale).float())  # torch's check-and-unscale kernel
        self._found = found
        return bool(found.item())

    def step(self, optimizer):
        if self._found is None:
            self.unscale_(optimizer)
        if not self._found.item():
            optimizer.step()

    def update(self):
        _UPDATE(self._scale, self._tracker, self._found, self._growth, self._backoff, self._interval)
        self._found = None

    def get_scale(self):
        return float(self._scale.item())
