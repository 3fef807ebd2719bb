# expect: passed
# A correct answer that returns int16 tensors (the patterns read as signed), as x.view(torch.int16) would.
import torch


def _rne_shift(u, n):
    return (u + ((1 << (n - 1)) - 1) + ((u >> n) & 1)) >> n


def to_bfloat16_bits(x):
    u = x.view(torch.int32).long() & 0xFFFFFFFF
    out = torch.where((u & 0x7FFFFFFF) > 0x7F800000, torch.full_like(u, 0x7FC0), _rne_shift(u, 16))
    return out.to(torch.int32).to(torch.int16)


def to_float16_bits(x):
    u = x.view(torch.int32).long() & 0xFFFFFFFF
    sign = (u >> 16) & 0x8000
    e = (u >> 23) & 0xFF
    m = (u & 0x7FFFFF) | 0x800000
    n = (126 - e).clamp(min=13, max=40)          # 13 for normals: the implicit 1 lands on the exponent field
    base = ((e - 113).clamp(min=0)) << 10
    h = base + _rne_shift(m, n)
    h = torch.where(e == 0, torch.zeros_like(h), h.clamp(max=0x7C00))
    h = torch.where(e == 255, torch.where((u & 0x7FFFFF) != 0, 0x7E00, 0x7C00), h)
    return (sign | h).to(torch.int32).to(torch.int16)
