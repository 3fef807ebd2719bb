# expect: forbidden
# Trick: a module __getattr__ (PEP 562) answers with a harmless function the first time the
# name is looked up (when the judge checks the entry point by identity) and with
# partial(operator.call, <the built-in>) afterwards, so only the runtime guard can see it.
import functools
import operator

import torch

_asked = []


def _decoy(parameters, max_norm, norm_type=2.0):
    return torch.zeros(())


def __getattr__(name):
    if name != "clip_grad_norm_":
        raise AttributeError(name)
    _asked.append(name)
    if len(_asked) == 1:
        return _decoy
    return functools.partial(operator.call, getattr(torch.nn.utils, "clip_grad" + "_norm_"))
