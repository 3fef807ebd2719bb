# expect: forbidden
"""Keeps its own state but hands the arithmetic to torch's functional RMSprop, reached through
importlib and a computed name so that no forbidden name appears in the source: the runtime
guard has to catch it."""

import importlib

import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.kw = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                       centered=centered)
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        functional = importlib.import_module("torch.optim." + "_functional")
        params = [p for p in self.params if p.grad is not None]
        for p in params:
            self.state.setdefault(p, dict(sq=torch.zeros_like(p), ga=torch.zeros_like(p),
                                          buf=torch.zeros_like(p), step=torch.zeros(())))
        st = [self.state[p] for p in params]
        getattr(functional, "rms" + "prop")(
            params, [p.grad for p in params], [s["sq"] for s in st], [s["ga"] for s in st],
            [s["buf"] for s in st], [s["step"] for s in st], **self.kw)
