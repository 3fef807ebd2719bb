# hostile (poison layer, marks): bf16-rounding, torch's own casts reached through the legacy tensor
# types named as text. The marks scan refuses the dtypes' names (.half, .float16, 'float16'), but
# 'torch.HalfTensor' is none of them, and Tensor.type() takes it. In practice the checks' own
# torch-function mode sees the 16-bit tensor (FAILED); for marks the tensor cannot exist: Tensor.type
# ends in aten::_to_copy, whose CPU kernel ends the run naming the dtype.
import torch


def to_bfloat16_bits(x):
    return x.type("torch.BFloat16Tensor").view(torch.int16)


def to_float16_bits(x):
    return x.type("torch.HalfTensor").view(torch.int16)
