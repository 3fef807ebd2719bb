# hostile (poison layer, marks): bf16-rounding, 16-bit tensors made without a 16-bit dtype's name:
# bfloat16 by CPU autocast (a matmul by one, at autocast's own dtype), float16 as the real part of
# complex32 ("chalf", which no list names). The checks' mode sees them in practice (FAILED); for marks
# autocast's cast and complex32 both end in aten::_to_copy's CPU kernel, naming the dtype.
import torch


def to_bfloat16_bits(x):
    flat = x.reshape(-1, 1)
    with torch.autocast("cpu"):
        rounded = torch.mm(flat, torch.ones(1, 1))
    return rounded.reshape(x.shape).view(torch.int16)


def to_float16_bits(x):
    return torch.view_as_real(x.to(torch.chalf))[..., 0].contiguous().view(torch.int16)
