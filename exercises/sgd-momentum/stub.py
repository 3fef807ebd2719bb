"""SGD with momentum, like torch.optim.SGD. Run `grind run sgd-momentum` to check your answer."""

import torch


class SGD:
    """SGD with momentum, dampening, Nesterov and L2 weight decay, with torch's conventions."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        raise NotImplementedError("write SGD.__init__")

    def zero_grad(self):
        """Clear every parameter's gradient (set it to None, or to zeros)."""
        raise NotImplementedError("write SGD.zero_grad")

    def step(self):
        """Update every parameter that has a gradient, in place. Skip those whose .grad is None."""
        raise NotImplementedError("write SGD.step")
