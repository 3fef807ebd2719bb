# hostile (scan layer, marks): bf16-rounding, float16 by numpy's own cast (outside torch: no operator
# kernel sees it), spelled 'e' so that no forbidden name appears; bfloat16 written honestly (numpy has
# none). In practice this PASSES (numpy is not watched: a deterrent's limit the README states); for
# marks the scan refuses numpy's float16 spellings ('e', 'f2', '<f2', ...) as text.
import numpy as np
import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return torch.where(nan, torch.full_like(u, 0x7FC0), rounded)


def to_float16_bits(x):
    return torch.from_numpy(x.numpy().astype("e").view(np.uint16).astype(np.int64))
