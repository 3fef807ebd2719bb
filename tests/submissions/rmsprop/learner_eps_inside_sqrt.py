# expect: failed pitfall=eps-inside-sqrt
"""A compact RMSprop that divides with rsqrt, so eps ends up under the root."""

import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.hp = dict(lr=lr, alpha=alpha, eps=eps, wd=weight_decay, mom=momentum, centered=centered)
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        h = self.hp
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad + h["wd"] * p
            st = self.state.setdefault(p, {"v": torch.zeros_like(p), "m": torch.zeros_like(p),
                                           "b": torch.zeros_like(p)})
            st["v"] = h["alpha"] * st["v"] + (1 - h["alpha"]) * g * g
            var = st["v"]
            if h["centered"]:
                st["m"] = h["alpha"] * st["m"] + (1 - h["alpha"]) * g
                var = var - st["m"] ** 2
            d = g * torch.rsqrt(var + h["eps"])
            if h["mom"] > 0:
                st["b"] = h["mom"] * st["b"] + d
                d = st["b"]
            p -= h["lr"] * d
