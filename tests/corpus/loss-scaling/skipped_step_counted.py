# expect: failed pitfall=skipped-step-counts
# source: independent mistake: a dataclass scaler whose update() counts every iteration as a step since the last backoff, the skipped one included
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class LossScaler:
    init_scale: float = 2.0 ** 16
    growth_factor: float = 2.0
    backoff_factor: float = 0.5
    growth_interval: int = 2000
    since_backoff: int = 0
    found: Optional[bool] = None

    def __post_init__(self):
        self.current = float(self.init_scale)

    def scale(self, loss):
        return loss * self.current

    def unscale_(self, optimizer):
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self.current)
                    found |= bool(p.grad.isnan().any() or p.grad.isinf().any())
        self.found = found
        return found

    def step(self, optimizer):
        if self.found is None:
            self.unscale_(optimizer)
        if not self.found:
            optimizer.step()

    def update(self):
        if self.found:
            self.current *= self.backoff_factor
            self.since_backoff = 0
        self.since_backoff += 1
        if not self.found and self.since_backoff >= self.growth_interval:
            self.current *= self.growth_factor
            self.since_backoff = 0
        self.found = None

    def get_scale(self):
        return self.current
