# expect: forbidden
# Trick: the built-in handed over behind two C-level layers, functools.partial around
# operator.call, so no function of this file is ever on the stack when the judge calls it.
import functools
import operator

import torch

clip_grad_norm_ = functools.partial(operator.call, getattr(torch.nn.utils, "clip_grad" + "_norm_"))
