"""Reference: float32 -> bfloat16 and float16 bit patterns with integer operations only.

Both conversions work on the float32 bit pattern read as an integer (``x.view(torch.int32)``),
in int64 so that no intermediate sum can overflow or go negative.
"""

import torch


def _bits32(x):
    """The float32 pattern of every entry as a non-negative int64 (0 .. 2**32 - 1)."""
    return x.detach().to(torch.float32).contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def to_bfloat16_bits(x):
    u = _bits32(x)
    # bfloat16 is the top half of a float32: same sign, same 8-bit exponent, 7 of the 23
    # fraction bits. Rounding to nearest, ties to even, on the 16 bits that are dropped:
    # add 0x7FFF plus the lowest kept bit, then cut. Below the halfway point 0x8000 the sum
    # does not reach the next unit; above it, it does; exactly at it, only an odd kept half
    # (lowest kept bit 1) is pushed up, so the result ends even.
    lowest_kept = (u >> 16) & 1
    rounded = (u + 0x7FFF + lowest_kept) >> 16
    # A carry out of the fraction moves into the exponent, which is exactly right: 1.1111111|1...
    # becomes 10.0000000, and the largest finite values round to the infinity pattern 0x7F80.
    # But the same carry would turn a NaN whose set fraction bits are all in the dropped half
    # (0x7F800001) into infinity, so NaNs are decided before rounding, from the original bits.
    is_nan = (u & 0x7FFFFFFF) > 0x7F800000
    quiet_nan = ((u >> 16) & 0x8000) | 0x7FC0
    return torch.where(is_nan, quiet_nan, rounded & 0xFFFF)


def to_float16_bits(x):
    u = _bits32(x)
    sign = (u >> 16) & 0x8000
    magnitude = u & 0x7FFFFFFF
    exponent = magnitude >> 23            # float32's biased exponent, bias 127
    fraction = magnitude & 0x7FFFFF       # 23 bits

    # Normal float16 numbers: exponent bias 15, 10 fraction bits. Re-bias by 127 - 15 = 112 and
    # round the 13 dropped fraction bits to nearest, ties to even. Adding the rounded fraction to
    # (exponent << 10) lets a carry ripple into the exponent, as in bfloat16.
    half_exponent = exponent - 112
    kept = fraction >> 13
    dropped = fraction & 0x1FFF
    up = (dropped > 0x1000) | ((dropped == 0x1000) & ((kept & 1) == 1))
    normal = (half_exponent << 10) + kept + up.to(torch.int64)
    # Anything that rounds to exponent 31 or more is past 65504: infinity.
    normal = torch.where(normal >= 0x7C00, torch.full_like(normal, 0x7C00), normal)

    # Below 2**-14 float16 has subnormals: value = k * 2**-24 with k < 1024. With the implicit
    # leading 1, the float32 value is (fraction | 2**23) * 2**(exponent - 150), which is that
    # 24-bit significand shifted right by (126 - exponent) in units of 2**-24.
    significand = fraction | 0x800000
    shift = (126 - exponent).clamp(min=14, max=25)  # 25 or more leaves less than half a unit: 0
    k = significand >> shift
    rest = significand & ((1 << shift) - 1)
    halfway = 1 << (shift - 1)
    k_up = (rest > halfway) | ((rest == halfway) & ((k & 1) == 1))
    subnormal = k + k_up.to(torch.int64)       # rounding up to 1024 is the smallest normal: right
    subnormal = torch.where(exponent <= 100, torch.zeros_like(k), subnormal)  # far too small: 0

    result = torch.where(half_exponent >= 1, normal, subnormal)
    # Infinity stays infinity; a NaN stays a NaN (quiet bit set, top of the payload kept).
    result = torch.where(magnitude == 0x7F800000, torch.full_like(result, 0x7C00), result)
    result = torch.where(magnitude > 0x7F800000, 0x7E00 | (fraction >> 13), result)
    return sign | result
