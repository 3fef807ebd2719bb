# expect: failed
# torch's cast reached through tensor methods and a dtype fetched by name, which no static scan sees;
# every case's torch-function watch reports "made a 16-bit float tensor".
import torch

_BF16 = getattr(torch, "bfloat" + "16")


def to_bfloat16_bits(x):
    return x.to(_BF16).view(torch.int16)


def to_float16_bits(x):
    return x.half().view(torch.int16)
