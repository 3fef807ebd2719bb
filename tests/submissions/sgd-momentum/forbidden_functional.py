# expect: forbidden
"""Keeps its own state but hands the arithmetic to torch's functional SGD, reached through
importlib so that no forbidden name appears in the source: the runtime guard has to catch it."""

import importlib

import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.kw = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                       nesterov=nesterov, maximize=False)
        self.bufs = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        functional = importlib.import_module("torch.optim." + "_functional")
        params = [p for p in self.params if p.grad is not None]
        bufs = [self.bufs.get(id(p)) for p in params]
        getattr(functional, "s" + "gd")(params, [p.grad for p in params], bufs, **self.kw)
        for p, b in zip(params, bufs):
            self.bufs[id(p)] = b
