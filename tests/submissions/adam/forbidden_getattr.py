# expect: forbidden
"""Reaches torch's optimizer through a computed name, inside its own wrapper class."""

import torch


class Adam:
    name = "Ad" + "am"

    def __init__(self, params, **kwargs):
        self.inner = getattr(torch.optim, self.name)(params, **kwargs)

    def zero_grad(self):
        self.inner.zero_grad()

    def step(self):
        self.inner.step()


class AdamW(Adam):
    name = "Ad" + "amW"
