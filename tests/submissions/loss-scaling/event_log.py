# expect: passed
"""Remembers the step number of the last backoff or growth instead of a running counter, and
unscales by multiplying with a float64 reciprocal; NaN is found with g != g."""

import math

import torch


class LossScaler:
    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.current = init_scale
        self.factors = (growth_factor, backoff_factor)
        self.interval = growth_interval
        self.steps = 0            # iterations finished so far
        self.last_event = 0       # iteration of the last growth or backoff
        self.verdict = None

    def scale(self, loss):
        return loss * self.current

    def unscale_(self, optimizer):
        inverse = 1.0 / self.current
        bad = False
        for group in optimizer.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                grad.copy_(grad.double() * inverse)
                if (grad != grad).any() or (grad.abs() == math.inf).any():
                    bad = True
        self.verdict = bad
        return bad

    def step(self, optimizer):
        if self.verdict is None:
            self.unscale_(optimizer)
        if self.verdict is False:
            optimizer.step()

    def update(self):
        self.steps += 1
        if self.verdict:
            self.current *= self.factors[1]
            self.last_event = self.steps
        elif self.steps - self.last_event == self.interval:
            self.current *= self.factors[0]
            self.last_event = self.steps
        self.verdict = None

    def get_scale(self):
        return self.current
