# hostile (scan layer, marks): bf16-rounding, numpy's float16 reached with no spelling at all:
# np.min_scalar_type(1.0) is numpy's float16 dtype (the smallest float type that holds 1.0).
# numpy's cast rounds to nearest even, subnormals included, outside torch's dispatcher, where
# the dtype poison cannot see it; the marks scan refuses numpy's float16 by its names and texts
# ('e', 'f2', np.float16, np.half), none of which appears here. bfloat16 is done honestly.
# Expected verdict, marks: refused (a float16 route) or forbidden. This is the README's known
# deterrent class ("a float16 format spelled at run time"), reached without even a spelling.
import numpy as np
import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    return torch.where(nan, torch.full_like(u, 0x7FC0), (u + 0x7FFF + ((u >> 16) & 1)) >> 16)


def to_float16_bits(x):
    small = np.min_scalar_type(1.0)
    bits = x.numpy().astype(small).view(np.uint16).astype(np.int64)
    return torch.tensor(bits.tolist(), dtype=torch.int64).reshape(x.shape)
