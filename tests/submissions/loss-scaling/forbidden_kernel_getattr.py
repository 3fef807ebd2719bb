# expect: forbidden
"""Writes the unscaling by hand but hands the scale update to torch's kernel via getattr."""

import torch

update_kernel = getattr(torch, "_amp_update" + "_scale_")


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.s = torch.tensor(float(init_scale))
        self.tracker = torch.tensor(0, dtype=torch.int32)
        self.args = (growth_factor, backoff_factor, growth_interval)
        self.found = None

    def scale(self, loss):
        return loss * self.s

    def unscale_(self, optimizer):
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self.s)
                    found = found or not bool(torch.isfinite(p.grad).all())
        self.found = found
        return found

    def step(self, optimizer):
        if self.found is None:
            self.unscale_(optimizer)
        if not self.found:
            optimizer.step()

    def update(self):
        update_kernel(self.s, self.tracker, torch.tensor(float(self.found)), *self.args)
        self.found = None

    def get_scale(self):
        return float(self.s)
