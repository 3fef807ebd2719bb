# hostile (poison layer, marks): bf16-rounding, float16 rounding done inside a kernel that returns no
# 16-bit tensor: fbgemm packs a matrix's weights as float16 (round to nearest even) and its fp16 GEMM
# returns float32, so a product by one reads each value rounded. No dtype is named and no 16-bit
# tensor exists, so neither the dtype kernels nor the checks' watch see a 16-bit tensor; the poison
# ends any call of an operator whose name says it rounds to float16 (fbgemm_*_fp16*).
import torch


def to_bfloat16_bits(x):
    u = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    return torch.where(nan, torch.full_like(u, 0x7FC0), (u + 0x7FFF + ((u >> 16) & 1)) >> 16)


def to_float16_bits(x):
    flat = x.reshape(-1, 1).contiguous()
    packed = torch.fbgemm_pack_gemm_matrix_fp16(flat)
    rounded = torch.fbgemm_linear_fp16_weight(torch.ones(1, 1), packed, torch.zeros(flat.shape[0]))
    u = rounded.reshape(-1).view(torch.int32).to(torch.int64) & 0xFFFFFFFF  # exact in float32
    sign, exponent, fraction = (u >> 16) & 0x8000, (u >> 23) & 0xFF, u & 0x7FFFFF
    normal = sign | ((exponent - 112) << 10) | (fraction >> 13)
    shift = (126 - exponent).clamp(0, 31)
    subnormal = sign | ((fraction | 0x800000) >> shift)
    bits = torch.where(exponent >= 113, normal, torch.where(exponent > 101, subnormal, sign))
    return bits.reshape(x.shape)
