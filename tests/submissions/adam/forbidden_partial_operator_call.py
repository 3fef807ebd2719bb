# expect: forbidden
# Trick: the entry points are functools.partial(operator.call, <torch's class>): calling them
# builds torch's optimizer with no function of this file on the stack.
import functools
import operator

import torch

Adam, AdamW = (functools.partial(operator.call, getattr(torch.optim, "Ad" + suffix)) for suffix in ("am", "amW"))
