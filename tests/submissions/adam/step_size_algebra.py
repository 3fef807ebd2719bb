# expect: passed
"""No shared base class: a helper function does one update. State in a dict keyed by id(p),
updates through p.data, and the bias corrections folded into a step size and a denominator,
with AdamW written as p - lr * (wd * p + adam_direction) using the old p."""

import math

import torch


def _update(p, g, state, lr, b1, b2, eps, wd, decoupled):
    if not decoupled and wd != 0:
        g = g + wd * p.data
    state["t"] = state.get("t", 0) + 1
    t = state["t"]
    m = state["m"] = b1 * state.get("m", 0.0) + (1 - b1) * g
    v = state["v"] = b2 * state.get("v", 0.0) + (1 - b2) * g * g
    denom = torch.sqrt(v) / math.sqrt(1 - b2 ** t) + eps
    direction = (m / denom) / (1 - b1 ** t)
    if decoupled:
        direction = direction + wd * p.data
    p.data = p.data - lr * direction


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.params = [p for p in params]
        self.hyper = (lr, betas[0], betas[1], eps, weight_decay)
        self.states = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for p in self.params:
            if p.grad is not None:
                _update(p, p.grad, self.states.setdefault(id(p), {}), *self.hyper, decoupled=False)


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        self.params = [p for p in params]
        self.hyper = (lr, betas[0], betas[1], eps, weight_decay)
        self.states = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for p in self.params:
            if p.grad is not None:
                _update(p, p.grad, self.states.setdefault(id(p), {}), *self.hyper, decoupled=True)
