# expect: forbidden
# Trick: LossScaler is functools.partial(operator.call, <torch's GradScaler>, "cpu"): the judge
# builds torch's scaler through two C-level layers.
import functools
import operator

import torch

LossScaler = functools.partial(operator.call, getattr(torch.amp, "Grad" + "Scaler"), "cpu")
