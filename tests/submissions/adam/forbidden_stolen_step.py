# expect: forbidden
# Trick: the class is the learner's own (torch.optim.Optimizer machinery, its own __init__), but
# each instance binds torch's Adam.step to itself when it is built. The class body holds no
# forbidden function, so only the runtime guard sees the judge's opt.step() run torch's code.
import types

import torch


def _torch_adam():
    guard = getattr(torch.optim, "Ad" + "am")
    return guard.__mro__[1]  # the guard is a subclass of the real class


class Adam(torch.optim.Optimizer):
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=False,
                        maximize=False, foreach=False, capturable=False, differentiable=False,
                        fused=None, decoupled_weight_decay=self.decoupled)
        super().__init__(params, defaults)
        self.step = types.MethodType(vars(_torch_adam())["step"], self)


class AdamW(Adam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
