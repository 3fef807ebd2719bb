# expect: failed pitfall=inf-only
# source: independent mistake: the overflow test is numpy's isinf on each gradient, so a NaN gradient is stepped on
import numpy as np
import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.scale_ = np.float64(init_scale)
        self.factors = {"grow": growth_factor, "shrink": backoff_factor}
        self.interval = growth_interval
        self.clean = 0
        self.overflow = None

    def scale(self, loss):
        return loss * float(self.scale_)

    def unscale_(self, optimizer):
        overflow = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                with torch.no_grad():
                    p.grad.copy_(torch.from_numpy(p.grad.numpy() / self.scale_))
                overflow = overflow or bool(np.isinf(p.grad.numpy()).any())
        self.overflow = overflow
        return overflow

    def step(self, optimizer):
        if self.overflow is None:
            self.unscale_(optimizer)
        if not self.overflow:
            optimizer.step()

    def update(self):
        if self.overflow:
            self.scale_ *= self.factors["shrink"]
            self.clean = 0
        else:
            self.clean += 1
            if self.clean == self.interval:
                self.scale_ *= self.factors["grow"]
                self.clean = 0
        self.overflow = None

    def get_scale(self):
        return float(self.scale_)
