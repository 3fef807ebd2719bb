# hostile (redteam8, REAL BYPASS of the marks poison and the guards; no finalizer, no frame games):
# sgd-momentum, SGD (momentum, dampening, Nesterov, L2 decay) computed by torch's fused CPU SGD kernel.
# How: (1) the poison's torch.library.Library is unregistered by calling its own destructor, found in
# weakref.finalize._registry (see adam_unregister_poison_kernels.py); (2) the in-place operator
# aten::_fused_sgd_ is reached through torch._C._jit_get_operation, which returns a NEW builtin on
# every call, unknown to the guards' identity table; the kernel runs in C++, no Python frame. The scan
# sees two literals, neither a forbidden leaf, and no door.
# Control: without the unregistering call, practice PASSES (the guards never see the builtin: a practice
# bypass on its own) and the poison ends the marked run (rc 104, "torch._C._VariableFunctions._fused_sgd_").
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, poison alone PASSED (rc 0), full marks
# PASSED. Real bypass.
import weakref

import torch

for _finalizer, _info in list(weakref.finalize._registry.items()):
    if _info.func is torch.library._del_library and any("fused_sgd" in key for key in _info.args[1]):
        _finalizer()

_FUSED, _ = torch._C._jit_get_operation("aten::_fused_" + "sgd_")


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.hyper = dict(weight_decay=float(weight_decay), momentum=float(momentum), lr=float(lr),
                          dampening=float(dampening), nesterov=bool(nesterov), maximize=False)
        self.buffers = {}

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, closure=None):
        for p in self.params:
            if p.grad is None:
                continue
            first = id(p) not in self.buffers
            if first:
                self.buffers[id(p)] = torch.zeros_like(p)
            bufs = [self.buffers[id(p)]] if self.hyper["momentum"] else []
            _FUSED([p.detach()], [p.grad], bufs, is_first_step=first, **self.hyper)  # torch's fused SGD
