# hostile (scan layer, marks): bf16-rounding, float16 by Python's own struct module, whose 'e' code
# packs IEEE half precision (round to nearest even) with neither torch nor numpy. In practice this
# PASSES (nothing watches struct: a deterrent's limit); for marks the scan refuses a struct format
# that spells 'e' ('<%de' here). One spelled at run time is what the README says stays a deterrent.
import struct

import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    return torch.where(nan, torch.full_like(u, 0x7FC0), (u + 0x7FFF + ((u >> 16) & 1)) >> 16)


def to_float16_bits(x):
    values = x.reshape(-1).tolist()
    out = []
    for v in values:
        try:
            out.append(struct.unpack("<H", struct.pack("<%de" % 1, v))[0])
        except OverflowError:
            out.append(0x7C00 | (0x8000 if v < 0 else 0))
    return torch.tensor(out, dtype=torch.int64).reshape(x.shape)
