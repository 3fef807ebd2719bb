# false positive (redteam7): bf16-rounding, a CORRECT answer (integer bit arithmetic only, no 16-bit
# dtype anywhere) refused for marks. Every correct answer is: the golden
# tests/submissions/bf16-rounding/passed_int16_view.py gets the same verdict in marks mode.
# Why: solutions/bf16-rounding/checks.py calls the entry point inside `with _HalfWatch():`, a
# TorchFunctionMode of the checks' own (it notes whether a 16-bit float tensor was made). The entry
# point returns while that mode is on torch's stack, and the guards' after_learner hook runs
# integrity.transition(), whose _modes() check refuses any mode on the stack (added after redteam6's
# clip_torch_function_mode.py): the judge's own mode is reported as "a torch function mode your code
# entered". tests/adversarial does not grade this exercise in marks mode, so nothing caught it.
# Expected: PASSED. Observed (2026-12-03): practice PASSED, marks FORBIDDEN ("a torch function mode
# your code entered was still active after your function returned").
import torch


def _unsigned(x):
    return x.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def to_bfloat16_bits(x):
    u = _unsigned(x)
    is_nan = (u & 0x7FFFFFFF) > 0x7F800000
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return torch.where(is_nan, (u >> 16) | 0x0040, rounded) & 0xFFFF


def _round_shift(value, shift):
    """value >> shift, rounded to nearest, ties to even (shift >= 1, a tensor)."""
    kept = value >> shift
    dropped = value - (kept << shift)
    half = torch.ones_like(value) << (shift - 1)
    up = (dropped > half) | ((dropped == half) & ((kept & 1) == 1))
    return kept + up.to(torch.int64)


def to_float16_bits(x):
    u = _unsigned(x)
    sign = (u >> 16) & 0x8000
    exp = (u >> 23) & 0xFF
    frac = u & 0x7FFFFF
    is_nan = (exp == 0xFF) & (frac != 0)
    is_inf = (exp == 0xFF) & (frac == 0)
    e = exp - 112  # re-biased: 127 - 15
    # normal range: keep 10 of 23 fraction bits; a carry may bump the exponent (even to infinity)
    normal = _round_shift((e.clamp(min=1) << 23) | frac, 13)
    normal = torch.where(normal >= 0x7C00, torch.full_like(normal, 0x7C00), normal)
    # subnormal: the 24-bit significand shifted right by 126 - exp
    shift = (126 - exp).clamp(min=1, max=40)
    sub = torch.where(shift >= 25, torch.zeros_like(u), _round_shift(frac | 0x800000, shift.clamp(max=25)))
    magnitude = torch.where(e >= 1, normal, sub)
    magnitude = torch.where(is_inf, torch.full_like(u, 0x7C00), magnitude)
    magnitude = torch.where(is_nan, torch.full_like(u, 0x7E00), magnitude)
    magnitude = torch.where(exp == 0, torch.zeros_like(u), magnitude)  # float32 subnormals are far below
    return (sign | magnitude) & 0xFFFF
