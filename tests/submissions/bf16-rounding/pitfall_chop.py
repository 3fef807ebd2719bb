# expect: failed pitfall=truncation
# The learner drops the low bits ("it's just the top half") but remembers NaN.
import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).long() & 0xFFFFFFFF
    return torch.where((u & 0x7FFFFFFF) > 0x7F800000, 0x7FC0, u >> 16)


def to_float16_bits(x):
    u = x.view(torch.int32).long() & 0xFFFFFFFF
    sign = (u >> 16) & 0x8000
    e = (u >> 23) & 0xFF
    m = (u & 0x7FFFFF) | 0x800000
    h = ((e - 113).clamp(min=0) << 10) + (m >> (126 - e).clamp(min=13, max=40))
    h = torch.where(e == 0, torch.zeros_like(h), h.clamp(max=0x7C00))
    h = torch.where(e == 255, torch.where((u & 0x7FFFFF) != 0, 0x7E00, 0x7C00), h)
    return sign | h
