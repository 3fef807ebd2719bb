# honest (false-positive probe, marks): bf16-rounding answered in two other styles that touch
# many dtype-taking operators with non-16-bit dtypes: bfloat16 on int32 arithmetic only
# (torch.bitwise_and/right_shift, torch.where, torch.full_like(dtype=int32), .to(torch.int64),
# torch.zeros(dtype=int64), a reduction with dtype=torch.int64), float16 as a plain Python loop
# over .tolist() returning torch.tensor(list of ints). Expected verdict: passed, practice and marks.
import torch


def to_bfloat16_bits(x):
    s = x.view(torch.int32)  # signed: the sign bit is handled by a mask after the shift
    nan = torch.bitwise_and(s, 0x7FFFFFFF) > 0x7F800000
    lsb = torch.bitwise_and(torch.bitwise_right_shift(s, 16), 1)
    rounded = torch.bitwise_right_shift(s + 0x7FFF + lsb, 16)  # a carry into the sign bit cannot happen
    bits = torch.bitwise_and(rounded, 0xFFFF).to(torch.int64)
    assert int(torch.sum(torch.zeros(1, dtype=torch.int64), dtype=torch.int64)) == 0
    return torch.where(nan, torch.full_like(bits, 0x7FC0, dtype=torch.int64), bits)


def _half(u):
    sign = (u >> 16) & 0x8000
    exponent = (u >> 23) & 0xFF
    fraction = u & 0x7FFFFF
    if exponent == 0xFF:
        return sign | (0x7E00 if fraction else 0x7C00)
    e = exponent - 112
    if e >= 1:
        kept, dropped = fraction >> 13, fraction & 0x1FFF
        value = (e << 10) | kept
        if dropped > 0x1000 or (dropped == 0x1000 and kept & 1):
            value += 1
        return sign | min(value, 0x7C00)
    shift = 126 - exponent
    if shift >= 25 or exponent == 0:
        return sign
    significand = fraction | 0x800000
    kept, dropped, half = significand >> shift, significand & ((1 << shift) - 1), 1 << (shift - 1)
    if dropped > half or (dropped == half and kept & 1):
        kept += 1
    return sign | kept


def to_float16_bits(x):
    patterns = (x.reshape(-1).view(torch.int32).to(torch.int64) & 0xFFFFFFFF).tolist()
    return torch.tensor([_half(u) for u in patterns], dtype=torch.int64).reshape(x.shape)
