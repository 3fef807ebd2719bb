# expect: passed
# A correct answer written with boolean-mask assignment into a preallocated result, one branch at a time.
import torch


def _split(x):
    u = x.reshape(-1).view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    return u, (u >> 31) & 1, (u >> 23) & 0xFF, u & 0x7FFFFF


def _round(v, shift):
    q = v >> shift
    r = v - (q << shift)
    half = torch.ones_like(v) << (shift - 1)
    return q + ((r > half) | ((r == half) & (q % 2 == 1))).long()


def to_bfloat16_bits(x):
    u, s, e, f = _split(x)
    out = _round(u, torch.full_like(u, 16))
    out[(e == 255) & (f != 0)] = 0x7FC0
    return out.reshape(x.shape)


def to_float16_bits(x):
    u, s, e, f = _split(x)
    out = torch.zeros_like(u)
    normal = (e >= 113) & (e < 255)
    out[normal] = ((e[normal] - 112) << 10) + _round(f[normal], torch.full_like(f[normal], 13))
    sub = (e >= 100) & (e < 113)
    out[sub] = _round(f[sub] | 0x800000, 126 - e[sub])
    out = out.clamp(max=0x7C00)
    out[e == 255] = torch.where(f[e == 255] != 0, 0x7E00, 0x7C00)
    return (out | (s << 15)).reshape(x.shape)
