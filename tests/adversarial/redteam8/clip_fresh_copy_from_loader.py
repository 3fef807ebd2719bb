import types

import torch
from torch.nn.utils import clip_grad

# A fresh copy of torch/nn/utils/clip_grad.py, made from its .pyc by the module's own loader,
# run into a plain dict: its functions are new objects whose code was never poisoned.
_ns = {"__name__": "torch.nn.utils._grind_copy", "__package__": "torch.nn.utils"}
types.FunctionType(clip_grad.__spec__.loader.get_code("torch.nn.utils.clip_grad"), _ns)()
_impl = _ns["clip_grad_" + "norm_"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return _impl(parameters, max_norm, norm_type)
