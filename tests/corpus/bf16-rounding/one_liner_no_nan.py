# expect: failed pitfall=nan-to-inf
# source: independent mistake: the well-known round-to-nearest-even one-liner with no NaN test; float16 sends exponent 255 down the overflow path
import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    lsb = (u >> 16) & 1
    return ((u + 0x7FFF + lsb) >> 16) & 0xFFFF


def to_float16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    sign = (u >> 16) & 0x8000
    e = (u >> 23) & 0xFF
    sig = (u & 0x7FFFFF) | 0x800000
    shift = 13 + (113 - e).clamp(min=0, max=27)
    q = sig >> shift
    rem = sig - (q << shift)
    half = 1 << (shift - 1)
    q = q + ((rem > half) | ((rem == half) & (q & 1 == 1))).long()
    h = torch.where(e >= 113, ((e - 113) << 10) + q, q)
    h = torch.where(e == 0, torch.zeros_like(h), h)
    return sign | h.clamp(max=0x7C00)  # exponent 255 is just "too big": infinity
