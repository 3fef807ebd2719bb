# hostile (poison layer, marks): bf16-rounding, CPython's own IEEE half encoder with a format no
# text spells: chr(101) is struct's 'e'. struct rounds float32 -> float16 to nearest even in C
# (PyFloat_Pack2), outside torch's dispatcher; the marks scan refuses the spelled formats only.
# bfloat16 is done honestly. Expected verdict, marks: forbidden, naming torch.float16 (the encoder
# is absent from a marked bf16-rounding run).
import struct

import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    return torch.where(nan, torch.full_like(u, 0x7FC0), (u + 0x7FFF + ((u >> 16) & 1)) >> 16)


def to_float16_bits(x):
    half = "<" + chr(101)
    out = [struct.unpack("<H", struct.pack(half, v))[0] for v in x.reshape(-1).tolist()]
    return torch.tensor(out, dtype=torch.int64).reshape(x.shape)
