# expect: failed pitfall=truncation
# source: independent mistake: handles NaN, infinity and subnormals with care, but every conversion chops the dropped bits (round toward zero)
import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).long() & 0xFFFFFFFF
    chopped = u >> 16
    return torch.where((u & 0x7FFFFFFF) > 0x7F800000, 0x7FC0 | (chopped & 0x8000), chopped)


def to_float16_bits(x):
    u = x.view(torch.int32).long() & 0xFFFFFFFF
    sign = (u >> 31) << 15
    exp = (u >> 23) & 255
    frac = u & 0x7FFFFF
    out = torch.zeros_like(u)
    big = exp - 112 >= 31
    normal = (exp - 112 >= 1) & ~big
    out = torch.where(normal, ((exp - 112) << 10) | (frac >> 13), out)
    small = (exp - 112 < 1) & (exp > 0)
    out = torch.where(small, (frac | (1 << 23)) >> (126 - exp).clamp(max=40), out)
    out = torch.where(big, torch.full_like(out, 0x7C00), out)
    out = torch.where((exp == 255) & (frac != 0), torch.full_like(out, 0x7E00), out)
    return sign | out
