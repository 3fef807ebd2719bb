# hostile (scan layer, marks): bf16-rounding, a 16-bit tensor torch's dispatcher never makes.
# torch.frombuffer builds a tensor of any dtype over a bytearray in C, past every operator kernel, so
# the marks poison cannot see it being made; copy_ into it rounds, and an int16 tensor over the same
# bytes reads the patterns. This is why the exercise names torch.frombuffer: the marks scan refuses it
# by name before anything runs, and in practice the guard's stand-in says forbidden.
import torch

_DTYPES = {"bf16": torch.BFloat16Tensor.dtype, "fp16": torch.HalfTensor.dtype}


def _patterns(x, which):
    flat = x.reshape(-1)
    buffer = bytearray(2 * max(flat.numel(), 1))
    torch.frombuffer(buffer, dtype=_DTYPES[which])[:flat.numel()].copy_(flat)
    return torch.frombuffer(buffer, dtype=torch.int16)[:flat.numel()].clone().reshape(x.shape)


def to_bfloat16_bits(x):
    return _patterns(x, "bf16")


def to_float16_bits(x):
    return _patterns(x, "fp16")
