# expect: forbidden
# Trick: a hand-written scaler that keeps its state under GradScaler's attribute names and, per
# instance, borrows GradScaler.update (torch's scale-update kernel behind it). The class itself
# holds no forbidden function, so only the runtime guard can see the borrowed method run.
import types

import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._enabled = True
        self._scale = torch.tensor([float(init_scale)])
        self._growth_tracker = torch.zeros(1, dtype=torch.int32)
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval = growth_interval
        self._found = None
        borrowed = vars(getattr(torch.amp, "Grad" + "Scaler").__mro__[1])["update"]
        self.update = types.MethodType(borrowed, self)

    def scale(self, loss):
        return loss * self._scale.to(loss.dtype)

    def unscale_(self, optimizer):
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self._scale)
                    found = found or not bool(torch.isfinite(p.grad).all())
        self._found = found
        return found

    def step(self, optimizer):
        if self._found is None:
            self.unscale_(optimizer)
        if not self._found:
            optimizer.step()

    def get_scale(self):
        return float(self._scale)
