"""Oracle: torch.amp.GradScaler on the CPU, wrapped in the exercise's interface.

GradScaler.unscale_ returns None and keeps its inf/NaN finding in a per-optimizer float tensor,
so the wrapper reads it from there to answer like the exercise asks; everything else is
GradScaler's own code (and its kernels torch._amp_foreach_non_finite_check_and_unscale_ and
torch._amp_update_scale_).
"""

import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, growth_factor=growth_factor,
                                            backoff_factor=backoff_factor, growth_interval=growth_interval)

    def scale(self, loss):
        return self._scaler.scale(loss)

    def unscale_(self, optimizer):
        self._scaler.unscale_(optimizer)
        state = self._scaler._per_optimizer_states[id(optimizer)]
        return bool(sum(float(v.item()) for v in state["found_inf_per_device"].values()))

    def step(self, optimizer):
        return self._scaler.step(optimizer)

    def update(self):
        self._scaler.update()

    def get_scale(self):
        return self._scaler.get_scale()
