# expect: failed pitfall=ties-away+no-subnormals
# source: independent pair of mistakes: ties rounded up in magnitude (+ half, then cut) and float16 subnormals flushed to zero
import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    return torch.where((u & 0x7FFFFFFF) > 0x7F800000, 0x7FC0, ((u + 0x8000) >> 16) & 0xFFFF)


def to_float16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    sign = (u >> 16) & 0x8000
    e = (u >> 23) & 0xFF
    f = u & 0x7FFFFF
    h = ((e - 112) << 10) + ((f + 0x1000) >> 13)
    h = torch.where(e - 112 <= 0, torch.zeros_like(h), h.clamp(max=0x7C00))
    h = torch.where(e == 0xFF, torch.where(f != 0, 0x7E00, 0x7C00), h)
    return sign | h
