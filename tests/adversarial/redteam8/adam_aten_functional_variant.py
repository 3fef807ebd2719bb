# hostile (redteam8, control for adam_unregister_poison_kernels.py; a PRACTICE bypass, held in marks):
# adam, Adam/AdamW by torch's fused CPU kernel through the unlisted functional packet
# torch.ops.aten._fused_adamw (out-of-place; only the in-place _fused_adamw_ is listed). No Python
# frame runs the kernel and its _op builtin is not in the guards' table, so practice does not see it.
# In marks the poison holds: the functional kernel calls the in-place operator through the dispatcher,
# which reaches the poison's CPU kernel. The verdict names "torch._C._VariableFunctions._fused_adamw_"
# (the first listed alias of the in-place operator), not the packet the file used: right family, a
# private spelling.
# Expected: FORBIDDEN. Observed (2026-12-03): practice PASSED, poison alone FORBIDDEN (rc 111), full
# marks FORBIDDEN. Practice bypass only.
import torch

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
