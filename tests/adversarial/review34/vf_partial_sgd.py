# A hostile learner's sgd-momentum (review of issue 33's sixth pass): heavy-ball SGD done by
# torch's fused kernel, reached through torch._VF (an alias of torch._C._VariableFunctions, whose
# attributes the guards cannot replace) and called from C by functools.partial, where the profile
# hook sees no call. It passed practice; the static scan now refuses the private name anywhere.
import functools, torch
_F = torch._VF._fused_sgd_  # the original builtin: torch._VF forwards to _VariableFunctions


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.kw = dict(weight_decay=float(weight_decay), momentum=float(momentum), lr=float(lr),
                       dampening=float(dampening), nesterov=bool(nesterov), maximize=False)
        self.bufs = [None] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with torch.no_grad():
            for i, p in enumerate(self.params):
                if p.grad is None:
                    continue
                first = self.bufs[i] is None
                if first:
                    self.bufs[i] = torch.zeros_like(p)
                bufs = [self.bufs[i]] if self.kw["momentum"] != 0 else []
                functools.partial(_F, **self.kw, is_first_step=first)([p], [p.grad], bufs)
