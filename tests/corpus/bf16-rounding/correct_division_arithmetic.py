# expect: passed
# source: independent answer: floor division and remainders by powers of two instead of shifts, ties decided by comparing twice the remainder
import torch


def _pattern(x):
    return x.contiguous().view(torch.int32).to(torch.int64) % (2 ** 32)


def _nearest_even(n, d):
    q = torch.div(n, d, rounding_mode="floor")
    r2 = 2 * (n - q * d)
    return q + ((r2 > d) | ((r2 == d) & (q % 2 == 1))).to(torch.int64)


def to_bfloat16_bits(x):
    p = _pattern(x)
    out = _nearest_even(p, torch.full_like(p, 65536)) % 65536
    is_nan = (p % 2 ** 31) > 0x7F800000
    return torch.where(is_nan, torch.full_like(out, 0x7FC1), out)


def to_float16_bits(x):
    p = _pattern(x)
    negative = p >= 2 ** 31
    a = p % 2 ** 31
    e = torch.div(a, 2 ** 23, rounding_mode="floor")
    f = a % 2 ** 23
    m = f + 2 ** 23 * (e > 0).to(torch.int64)
    e16 = e - 112
    # value = m * 2**(e - 150) = (m / 2**(13 + k)) * 2**-24 * 2**max(e16 - 1, 0) with k = max(1 - e16, 0)
    k = torch.clamp(1 - e16, min=0, max=30)
    units = _nearest_even(m, 2 ** (13 + k))
    h = torch.clamp(e16 - 1, min=0) * 1024 + units
    h = torch.clamp(h, max=31744)
    h = torch.where(e == 255, torch.where(f > 0, torch.full_like(h, 32256), torch.full_like(h, 31744)), h)
    return h + 32768 * negative.to(torch.int64)
