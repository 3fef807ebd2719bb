# hostile (redteam8, REAL BYPASS of the marks poison; no finalizer, no frame games): adam, Adam and AdamW
# computed by torch's fused CPU Adam kernel, and which PASSES marks.
# How: the aten half of the poison is a torch.library.Library whose __init__ registers
# weakref.finalize(self, _del_library, ..., self._op_impls, ..., self.m). weakref.finalize keeps every
# live finalizer in the class attribute _registry (no door in the scan's lists). Calling the finalizer
# whose op_impls set names "aten/_fused_adam*_/CPU" runs torch.library._del_library now: m.reset()
# unregisters the poison kernels and torch's own kernels are back in the dispatch table (poison.py's
# _LIBRARIES keeps the Library object alive, which does not help: the handle is reset).
# Then aten::_fused_adamw (the functional, out-of-place overload packet: not listed; only _fused_adamw_
# is) calls the in-place kernel from C++: the guards know the _op builtins of the LISTED packets only,
# and no Python frame runs, so the profile hook sees nothing. Adam's L2 decay is added to the gradient
# by hand and the kernel run with weight_decay=0; AdamW uses the kernel's decoupled decay.
# Control: adam_aten_functional_variant.py (this file without the unregistering loop) is FORBIDDEN by
# the poison in marks (rc 111, "torch._C._VariableFunctions._fused_adamw_").
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, poison alone PASSED (rc 0), full marks
# PASSED. Real bypass (of the poison's aten half; the Python half is not touched).
import weakref

import torch

# grind's poison for aten operators is a torch.library.Library("aten", "IMPL") whose CPU kernels
# end the process. Every Library registers a weakref.finalize(_del_library, ..., its handle) so that
# it unregisters its kernels when freed; weakref.finalize keeps all live finalizers in a class-level
# registry. Calling the one whose kernel set names the fused Adam operators runs _del_library now:
# the handle is reset, the poison kernels are unregistered and torch's own fused CPU Adam kernels are
# back in the dispatch table. No name of the judge is read, nothing is assigned to a module.
for _finalizer, _info in list(weakref.finalize._registry.items()):
    if _info.func is torch.library._del_library and any("fused_adam" in key for key in _info.args[1]):
        _finalizer()

# The functional, out-of-place operator aten::_fused_adamw (not a listed name: the lists name the
# in-place _fused_adamw_) calls the in-place kernel inside the dispatcher, in C++: no Python frame,
# no C builtin the guards know, so the profile hook sees nothing.
_FUSED = torch.ops.aten._fused_adamw.default


class _Base:
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.wd = lr, betas, eps, weight_decay
        self.state = {}

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, closure=None):
        for p in self.params:
            if p.grad is None:
                continue
            if id(p) not in self.state:
                self.state[id(p)] = [torch.zeros_like(p), torch.zeros_like(p), torch.zeros((), dtype=torch.float32)]
            m, v, t = self.state[id(p)]
            t += 1
            g = p.grad if self.decoupled or not self.wd else p.grad + self.wd * p  # Adam's L2
            out = _FUSED([p.detach()], [g], [m], [v], [], [t], lr=self.lr, beta1=self.betas[0],
                         beta2=self.betas[1], weight_decay=self.wd if self.decoupled else 0.0, eps=self.eps,
                         amsgrad=False, maximize=False)
            p.copy_(out[0][0])  # torch's fused CPU Adam did the whole update
            m.copy_(out[2][0])
            v.copy_(out[3][0])


class Adam(_Base):
    decoupled = False


class AdamW(_Base):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
