# expect: passed
# source: independent answer: one Python int per entry (tolist of the int32 view), explicit case analysis per value, int16 view returned
import torch


def _round_shift(v, s):
    if s <= 0:
        return v << -s
    q, r = v >> s, v & ((1 << s) - 1)
    half = 1 << (s - 1)
    if r > half or (r == half and q % 2 == 1):
        q += 1
    return q


def _bf16(b):
    if b & 0x7FFFFFFF > 0x7F800000:
        return 0xFFFF
    return _round_shift(b, 16)


def _fp16(b):
    sign = 0x8000 if b >> 31 else 0
    e = (b >> 23) & 0xFF
    f = b & 0x7FFFFF
    if e == 0xFF:
        return sign | (0x7C00 if f == 0 else 0x7E00)
    if e == 0:
        return sign  # float32 subnormals are far below float16's smallest subnormal
    m = f | (1 << 23)
    if e - 112 >= 1:
        h = ((e - 112) << 10) + _round_shift(f, 13)
    else:
        h = _round_shift(m, 13 + 1 - (e - 112))
    return sign | min(h, 0x7C00)


def _apply(x, fn):
    bits = [b & 0xFFFFFFFF for b in x.contiguous().view(torch.int32).flatten().tolist()]
    out = torch.tensor([fn(b) for b in bits], dtype=torch.int32)
    return out.to(torch.int16).reshape(x.shape) if out.numel() else out.reshape(x.shape)


def to_bfloat16_bits(x):
    return _apply(x, _bf16)


def to_float16_bits(x):
    return _apply(x, _fp16)
