# hostile (poison layer, marks): bf16-rounding, no cast called at all. bfloat16 becomes the default
# dtype (autocast's dtype, fetched, not named) and torch.tensor builds the rounded values from Python
# floats; float16 is a sum over one element with dtype= (a reduction's output dtype rounds). For marks
# both end in a CPU kernel (aten::empty, aten::sum) that sees the 16-bit dtype and ends the run.
import torch


def to_bfloat16_bits(x):
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.get_autocast_dtype("cpu"))
    try:
        rounded = torch.tensor(x.tolist())
    finally:
        torch.set_default_dtype(before)
    return rounded.reshape(x.shape).view(torch.int16)


def to_float16_bits(x):
    return x.unsqueeze(-1).sum(-1, dtype=torch.HalfTensor.dtype).view(torch.int16)
