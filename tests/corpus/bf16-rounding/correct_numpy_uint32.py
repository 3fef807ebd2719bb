# expect: passed
# source: independent answer: numpy uint32/uint64 arithmetic on the raw bits, np.where for every branch, results back as int64 tensors
import numpy as np
import torch


def _u(x):
    return x.detach().cpu().contiguous().numpy().astype(np.float32).view(np.uint32).astype(np.uint64)


def _rne(value, shift):
    """value >> shift, rounded to nearest with ties to even; shift is an array."""
    q = value >> shift
    r = value - (q << shift)
    h = np.uint64(1) << (shift - np.uint64(1))
    return q + ((r > h) | ((r == h) & (q & np.uint64(1) == 1))).astype(np.uint64)


def to_bfloat16_bits(x):
    u = _u(x)
    out = _rne(u, np.full_like(u, 16)) & np.uint64(0xFFFF)
    nan = (u & np.uint64(0x7FFFFFFF)) > np.uint64(0x7F800000)
    out = np.where(nan, np.uint64(0x7FC0), out)
    return torch.from_numpy(out.astype(np.int64)).reshape(x.shape)


def to_float16_bits(x):
    u = _u(x)
    sign = (u >> np.uint64(16)) & np.uint64(0x8000)
    exp = ((u >> np.uint64(23)) & np.uint64(0xFF)).astype(np.int64)
    frac = u & np.uint64(0x7FFFFF)
    sig = frac | np.where(exp > 0, np.uint64(0x800000), np.uint64(0))
    e16 = exp - 112
    shift = np.clip(13 + np.maximum(0, 1 - e16), 0, 40).astype(np.uint64)
    mag = (np.maximum(e16 - 1, 0).astype(np.uint64) << np.uint64(10)) + _rne(sig, shift)
    mag = np.minimum(mag, np.uint64(0x7C00))
    mag = np.where(exp == 255, np.where(frac != 0, np.uint64(0x7E00), np.uint64(0x7C00)), mag)
    return torch.from_numpy((sign | mag).astype(np.int64)).reshape(x.shape)
