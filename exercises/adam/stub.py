"""Adam and AdamW. Run `grind run adam` to check your answer."""

import torch


class Adam:
    """Adam over a list (or any iterable) of parameters, like torch.optim.Adam.

    weight_decay is an L2 penalty, as in torch.optim.Adam.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        raise NotImplementedError("write Adam.__init__")

    def zero_grad(self):
        """Clear every parameter's gradient (set it to None, or to zeros)."""
        raise NotImplementedError("write Adam.zero_grad")

    def step(self):
        """Update every parameter that has a gradient, in place. Skip those whose .grad is None."""
        raise NotImplementedError("write Adam.step")


class AdamW:
    """AdamW, like torch.optim.AdamW: Adam with decoupled weight decay."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        raise NotImplementedError("write AdamW.__init__")

    def zero_grad(self):
        raise NotImplementedError("write AdamW.zero_grad")

    def step(self):
        raise NotImplementedError("write AdamW.step")
