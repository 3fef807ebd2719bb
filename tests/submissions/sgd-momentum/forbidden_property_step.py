# expect: forbidden
# Trick: step is a property that hands back torch's SGD.step, unwrapped from its decorator and
# bound to this object. The class holds only a lambda there, so checking the entry point finds
# nothing; the call is torch's code running with a learner object as self.
import types

import torch

_plain_step = vars(getattr(torch.optim, "S" + "GD").__mro__[1])["step"].__wrapped__


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.param_groups = [dict(params=list(params), lr=lr, momentum=momentum, dampening=dampening,
                                  weight_decay=weight_decay, nesterov=nesterov, maximize=False, foreach=False,
                                  differentiable=False, fused=None)]
        self.state = {}

    def zero_grad(self):
        for p in self.param_groups[0]["params"]:
            p.grad = None

    step = property(lambda self: types.MethodType(_plain_step, self))
