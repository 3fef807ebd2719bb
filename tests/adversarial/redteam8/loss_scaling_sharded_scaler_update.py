# hostile (redteam8, list gap attempt, HELD): loss-scaling, the scale update rule taken from FSDP's
# ShardedGradScaler._amp_update_scale_cpu_ (a subclass of GradScaler, not listed, with its own
# pure-Python CPU update), called unbound on a SimpleNamespace; unscale by hand.
# Held: importing torch.distributed.fsdp.sharded_grad_scaler subclasses GradScaler, which is the
# guards' stand-in (its __init_subclass__ refuses) and poisoned: the run ends at the import (line 4).
# Expected: FORBIDDEN. Observed (2026-12-03): practice FORBIDDEN (guard, line 4), poison alone
# FORBIDDEN (poison, rc 96, "torch.amp.GradScaler"), full marks FORBIDDEN (poison). Not a bypass.
import types

import torch
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

# ShardedGradScaler (FSDP's subclass of torch.amp.GradScaler, not in the forbidden list) carries
# its own pure-Python CPU copy of the dynamic-scale update rule, _amp_update_scale_cpu_: the
# growth/backoff bookkeeping this exercise asks for. It is neither guarded nor poisoned (only
# GradScaler's own methods are). Called unbound on a SimpleNamespace, so no poisoned
# GradScaler.__init__ runs and no "learner object" is its self.
_UPDATE = ShardedGradScaler._amp_update_scale_cpu_


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._s = types.SimpleNamespace(
            _scale=torch.tensor(float(init_scale)), _growth_tracker=torch.tensor(0, dtype=torch.int32),
            _growth_factor=growth_factor, _backoff_factor=backoff_factor, _growth_interval=growth_interval)
        self._found = None

    def scale(self, loss):
        return loss * self._s._scale.to(loss.dtype)

    def unscale_(self, optimizer):
        inv = 1.0 / self._s._scale
        found = False
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not torch.isfinite(p.grad).all():
                        found = True
                    p.grad.mul_(inv)
        self._found = found
        return found

    def step(self, optimizer):
        if self._found is None:
            self.unscale_(optimizer)
        if not self._found:
            optimizer.step()

    def update(self):
        _UPDATE(self._s, torch.tensor(1.0 if self._found else 0.0))  # the library's update rule
        self._found = None

    def get_scale(self):
        return float(self._s._scale)
