# expect: forbidden
# importlib.reload of torch's clipping module makes a fresh clip_grad_norm_: a new function with
# new code objects, which the guards once knew only by identity. They now know the forbidden code
# by what it is (its fingerprint), so the reloaded copy is as forbidden as the original.
import importlib

import torch.nn.utils.clip_grad as _clip_module

_fresh = getattr(importlib.reload(_clip_module), "clip_grad" + "_norm_")


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return _fresh(parameters, max_norm, norm_type)
