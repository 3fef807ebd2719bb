# expect: forbidden
# Trick: new classes, built with type() from a copy of torch's class dictionaries, so neither is
# torch's class nor a subclass of it (the guard's __init_subclass__ never runs).
import torch

_real = {name: getattr(torch.optim, name).__mro__[1] for name in ("Ad" + "am", "Ad" + "amW")}

Adam = type("Adam", (torch.optim.Optimizer,), dict(vars(_real["Ad" + "am"])))
AdamW = type("AdamW", (Adam,), dict(vars(_real["Ad" + "amW"])))
