# expect: failed pitfall=no-subnormals
# source: independent mistake: float16 values below the smallest normal 2**-14 flushed to a signed zero, as a flush-to-zero hardware mode does
import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    out = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return torch.where(nan, 0x7FC0, out)


def to_float16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    sign = (u >> 16) & 0x8000
    exp = ((u >> 23) & 0xFF) - 112
    man = u & 0x7FFFFF
    keep, drop = man >> 13, man & 0x1FFF
    up = (drop > 0x1000) | ((drop == 0x1000) & (keep & 1 == 1))
    h = (exp << 10) + keep + up.long()
    h = torch.where(exp <= 0, torch.zeros_like(h), h)   # no subnormals
    h = torch.where(exp >= 31, torch.full_like(h, 0x7C00), h.clamp(max=0x7C00))
    h = torch.where(((u >> 23) & 0xFF == 0xFF) & (man != 0), torch.full_like(h, 0x7E00), h)
    return sign | h
