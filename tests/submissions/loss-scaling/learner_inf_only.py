# expect: failed pitfall=inf-only
import math

import torch


class LossScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.s = init_scale
        self.gf, self.bf, self.gi = growth_factor, backoff_factor, growth_interval
        self.clean = 0
        self.found = None

    def scale(self, loss):
        return loss * self.s

    def unscale_(self, optimizer):
        params = [p for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        self.found = False
        for p in params:
            p.grad.mul_(1.0 / self.s)
            # an overflow shows up as an infinite magnitude
            if (p.grad.abs() == math.inf).any():
                self.found = True
        return self.found

    def step(self, optimizer):
        if self.found is None:
            self.unscale_(optimizer)
        if not self.found:
            optimizer.step()

    def update(self):
        if self.found:
            self.s *= self.bf
            self.clean = 0
        else:
            self.clean += 1
            if self.clean == self.gi:
                self.s *= self.gf
                self.clean = 0
        self.found = None

    def get_scale(self):
        return self.s
