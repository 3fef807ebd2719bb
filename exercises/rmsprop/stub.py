"""RMSprop. Run `grind run rmsprop` to check your answer."""

import torch


class RMSprop:
    """RMSprop over a list (or any iterable) of parameters, like torch.optim.RMSprop.

    alpha is the decay of the running mean of squared gradients; eps, weight_decay, momentum and
    centered mean what they mean in torch.optim.RMSprop.
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        raise NotImplementedError("write RMSprop.__init__")

    def zero_grad(self):
        """Clear every parameter's gradient (set it to None, or to zeros)."""
        raise NotImplementedError("write RMSprop.zero_grad")

    def step(self):
        """Update every parameter that has a gradient, in place. Skip those whose .grad is None."""
        raise NotImplementedError("write RMSprop.step")
