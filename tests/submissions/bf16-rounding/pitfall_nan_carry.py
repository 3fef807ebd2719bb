# expect: failed pitfall=nan-to-inf
# The learner rounds correctly but never tests for NaN: the carry turns 0x7F800001 into infinity.
import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).long() & 0xFFFFFFFF
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def to_float16_bits(x):
    u = x.view(torch.int32).long() & 0xFFFFFFFF
    sign = (u >> 16) & 0x8000
    e = (u >> 23) & 0xFF
    m = (u & 0x7FFFFF) | 0x800000
    n = (126 - e).clamp(min=13, max=40)
    h = ((e - 113).clamp(min=0) << 10) + ((m + ((1 << (n - 1)) - 1) + ((m >> n) & 1)) >> n)
    h = torch.where(e == 0, torch.zeros_like(h), h.clamp(max=0x7C00))
    return sign | h
