# expect: forbidden
# Trick: SGD is functools.partial(operator.call, <torch's SGD>): the judge's call builds torch's
# optimizer through two C-level layers, with no function of this file on the stack.
from functools import partial
from operator import call

import torch

SGD = partial(call, getattr(torch.optim, "S" + "GD"))
