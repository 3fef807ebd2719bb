"""Oracle: torch's own casts, ``tensor.to(torch.bfloat16)`` and ``.to(torch.float16)``, read back
as 16-bit patterns. The cases compare every non-NaN pattern bit for bit.

The cases also watch (with a torch-function mode) for 16-bit float tensors, which a learner may not
make; the oracle's casts are its whole point, so they run with that watch switched off.
"""

import torch



def _pattern(y):
    return y.contiguous().view(torch.int16).to(torch.int64) & 0xFFFF


def to_bfloat16_bits(x):
    with torch._C.DisableTorchFunction():
        return _pattern(x.to(torch.bfloat16))


def to_float16_bits(x):
    with torch._C.DisableTorchFunction():
        return _pattern(x.to(torch.float16))
