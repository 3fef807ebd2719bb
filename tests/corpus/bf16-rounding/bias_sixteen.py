# expect: failed pitfall=wrong-bias
# source: independent mistake: float16's bias taken as 2**4 = 16 instead of 2**4 - 1 = 15, so the exponent moves by 111; numpy arithmetic
import numpy as np
import torch


def to_bfloat16_bits(x):
    u = x.numpy().view(np.uint32).astype(np.int64)
    out = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    out = np.where((u & 0x7FFFFFFF) > 0x7F800000, 0x7FC0, out)
    return torch.from_numpy(out)


def to_float16_bits(x):
    u = x.numpy().view(np.uint32).astype(np.int64)
    sign = (u >> 16) & 0x8000
    e = (u >> 23) & 0xFF
    m = u & 0x7FFFFF
    e16 = e - (127 - 16)
    sig = m | (1 << 23)
    shift = np.clip(13 + np.maximum(0, 1 - e16), 0, 40)
    q = sig >> shift
    r = sig & ((1 << shift) - 1)
    h = 1 << (shift - 1)
    q = q + ((r > h) | ((r == h) & (q % 2 == 1)))
    out = np.maximum(e16 - 1, 0) * 1024 + q
    out = np.where(e == 0, 0, np.minimum(out, 0x7C00))
    out = np.where(e == 255, np.where(m != 0, 0x7E00, 0x7C00), out)
    return torch.from_numpy(sign | out)
