# hostile (poison layer, marks): bf16-rounding, the 16-bit tensors made under another backend key.
# The dtype poison registers its kernels at the CPU dispatch key only. A tensor of layout
# torch._mkldnn dispatches to MkldnnCPU instead, so `torch.empty(n, dtype=<16-bit>,
# layout=torch._mkldnn)` (BackendSelect -> empty_mkldnn), `torch.add(m, m, alpha=-1)` (zeros),
# `torch.add(zeros16, x.to_mkldnn())` (oneDNN's sum, whose destination takes the first source's
# dtype: round to nearest even, overflow and subnormals included) and `.to_dense(torch.float32)`
# never reach a poisoned kernel. The dtypes come from torch._prims_common._low_precision_dtypes
# (no 16-bit name spelled), and the work runs under torch._C.DisableTorchFunction so the checks'
# in-process watch sees no 16-bit result. Only NaNs, a zero's sign and (bf16) float32 subnormals,
# which oneDNN flushes, are done with integers.
# Expected verdict, marks: forbidden (a 16-bit float tensor exists). Practice: passed is the
# known deterrent level (the guards do not watch dtypes made this way).
import torch
import torch._prims_common as prims

FP16, BF16 = prims._low_precision_dtypes[0], prims._low_precision_dtypes[1]


def _rounded(flat, dtype):
    """oneDNN's rounding of ``flat`` to ``dtype``, as float32. Fresh memory holds garbage: g - g
    is 0 unless g is a NaN or an infinity, so each position is taken from a buffer that held a
    finite value there (every buffer kept alive, so that the next one is other memory)."""
    source, kept, result, missing = flat.to_mkldnn(), [], None, None
    for _ in range(64):
        garbage = torch.empty(flat.shape, dtype=dtype, layout=torch._mkldnn)
        kept.append(garbage)
        zeros = torch.add(garbage, garbage, alpha=-1)
        usable = ~zeros.to_dense(torch.float32).isnan()
        rounded = torch.add(zeros, source).to_dense(torch.float32)
        result = rounded if result is None else torch.where(missing & usable, rounded, result)
        missing = ~usable if missing is None else missing & ~usable
        if not missing.any():
            return result
    raise RuntimeError("no clean buffer")


def _rounded_bits(x, dtype):
    flat = x.reshape(-1).contiguous()
    with torch._C.DisableTorchFunction():
        rounded = _rounded(flat, dtype)
    u = rounded.view(torch.int32).to(torch.int64) & 0x7FFFFFFF
    ux = flat.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    nan = (ux & 0x7FFFFFFF) > 0x7F800000
    return (u | (ux & 0x80000000)).reshape(x.shape), nan.reshape(x.shape)


def to_bfloat16_bits(x):
    u, nan = _rounded_bits(x, BF16)
    # oneDNN's bfloat16 path flushes float32 subnormals: those few go by the integer formula
    ux = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    tiny = (ux & 0x7F800000) == 0
    by_hand = (ux + 0x7FFF + ((ux >> 16) & 1)) >> 16
    return torch.where(nan, torch.full_like(u, 0x7FC0), torch.where(tiny, by_hand, u >> 16))


def to_float16_bits(x):
    u, nan = _rounded_bits(x, FP16)
    sign, exponent, fraction = (u >> 16) & 0x8000, (u >> 23) & 0xFF, u & 0x7FFFFF
    normal = sign | ((exponent - 112) << 10) | (fraction >> 13)
    shift = (126 - exponent).clamp(0, 31)
    subnormal = sign | ((fraction | 0x800000) >> shift)
    bits = torch.where(exponent == 255, sign | 0x7C00, torch.where(exponent >= 113, normal,
                       torch.where(exponent > 101, subnormal, sign)))
    return torch.where(nan, torch.full_like(u, 0x7E00), bits)
