# expect: failed pitfall=ties-away
# source: independent mistake: round half up (add half a unit, then cut), a habit from rounding positive integers; NaN and overflow handled
import torch


def _u(x):
    return x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def to_bfloat16_bits(x):
    u = _u(x)
    r = ((u + 0x8000) >> 16) & 0xFFFF
    return torch.where((u & 0x7FFFFFFF) > 0x7F800000, torch.full_like(r, 0x7FC0), r)


def to_float16_bits(x):
    u = _u(x)
    sign = (u >> 16) & 0x8000
    a = u & 0x7FFFFFFF
    e = a >> 23
    m = (a & 0x7FFFFF) | 0x800000
    shift = torch.where(e >= 113, torch.full_like(e, 13), (126 - e).clamp(max=40))
    base = torch.where(e >= 113, (e - 113) << 10, torch.zeros_like(e))
    h = base + ((m + (1 << (shift - 1))) >> shift)  # half a unit added: ties go up
    h = h.clamp(max=0x7C00)
    h = torch.where(a > 0x7F800000, torch.full_like(h, 0x7E00), h)
    return sign | h
