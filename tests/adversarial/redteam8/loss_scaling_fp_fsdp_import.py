# false-positive probe (redteam8): the loss-scaling reference plus an unused import of torch.distributed.fsdp
# (which holds a GradScaler subclass). Expected: PASSED everywhere. Observed (2026-12-03): practice
# PASSED, poison alone PASSED, full marks PASSED. No false positive.
import torch.distributed.fsdp  # noqa: F401  (unused: a correct answer that merely imports FSDP)
"""Reference: dynamic loss scaling with the semantics of torch.amp.GradScaler."""

import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._clean_steps = 0     # consecutive steps without inf/NaN since the last growth or backoff
        self._found_inf = None    # None: not unscaled yet this iteration; else the answer of unscale_

    def scale(self, loss):
        # Backward of S * loss gives S * grad: small gradients move away from fp16's underflow.
        return loss * self._scale

    def unscale_(self, optimizer):
        found_inf = False
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    # Divide every gradient, even after an inf turned up: inf and NaN stay as
                    # they are, finite entries become true gradients again.
                    p.grad.div_(self._scale)
                    # isfinite is False for +inf, -inf *and* NaN.
                    if not bool(torch.isfinite(p.grad).all()):
                        found_inf = True
        self._found_inf = found_inf
        return found_inf

    def step(self, optimizer):
        if self._found_inf is None:       # the user did not unscale: do it now, exactly once
            self.unscale_(optimizer)
        if self._found_inf:
            return None                   # skip: the parameters must never see inf or NaN
        return optimizer.step()

    def update(self):
        if self._found_inf:
            self._scale *= self._backoff_factor
            self._clean_steps = 0         # the run of clean steps starts again from zero
        else:
            self._clean_steps += 1
            if self._clean_steps == self._growth_interval:   # grow on the step that completes it
                self._scale *= self._growth_factor
                self._clean_steps = 0
        self._found_inf = None            # the next iteration has not been unscaled yet

    def get_scale(self):
        return self._scale
