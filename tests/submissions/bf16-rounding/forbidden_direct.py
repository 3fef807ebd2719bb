# expect: forbidden
# torch's own cast, named as written: the static scan refuses torch.bfloat16 and torch.float16.
import torch


def to_bfloat16_bits(x):
    return x.to(torch.bfloat16).view(torch.int16)


def to_float16_bits(x):
    return x.to(torch.float16).view(torch.int16)
