# expect: failed pitfall=truncation+nan-to-inf
# source: look-alike of TensorFlow's FloatToBFloat16 (tensorflow/core/framework/bfloat16.cc), which copies the high 16 bits of each float; float16 cut the same way
import torch


def _bits(x):
    return x.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def to_bfloat16_bits(x):
    return _bits(x) >> 16  # the upper half, as TF's memcpy of p[1] does


def to_float16_bits(x):
    u = _bits(x)
    s = (u >> 16) & 0x8000
    e = (u >> 23) & 0xFF
    f = u & 0x7FFFFF
    e16 = e - 112
    normal = (e16 << 10) | (f >> 13)
    sub_shift = (126 - e).clamp(min=14, max=40)
    sub = (f | 0x800000) >> sub_shift
    h = torch.where(e16 > 0, normal, sub)
    h = torch.where(e16 >= 31, torch.full_like(h, 0x7C00), h)
    return s | h
