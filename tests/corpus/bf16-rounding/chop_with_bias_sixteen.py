# expect: failed pitfall=truncation+wrong-bias
# source: independent pair of mistakes: every conversion chops the dropped bits, and float16's exponent is re-biased by 127 - 16; NaN and infinity handled
import torch


def _u(x):
    return x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def to_bfloat16_bits(x):
    u = _u(x)
    return torch.where((u & 0x7FFFFFFF) > 0x7F800000, torch.full_like(u, 0x7FC0), u >> 16)


def to_float16_bits(x):
    u = _u(x)
    sign = (u >> 16) & 0x8000
    e = (u >> 23) & 0xFF
    f = u & 0x7FFFFF
    e16 = e - 111  # "bias 16"
    m = f | 0x800000
    h = torch.where(e16 >= 1, (e16 << 10) | (f >> 13), m >> (13 + 1 - e16).clamp(min=0, max=40))
    h = torch.where(e == 0, torch.zeros_like(h), h.clamp(max=0x7C00))
    h = torch.where(e == 0xFF, torch.where(f != 0, 0x7E00, 0x7C00), h)
    return sign | h
