# expect: forbidden
# Steps around the wrapper: the guard's base class is the real Adam.
import torch
_optim = torch.optim
class Adam(getattr(_optim, "Ad" + "am").__bases__[0]):
    pass
class AdamW(getattr(_optim, "Ad" + "amW").__bases__[0]):
    pass
