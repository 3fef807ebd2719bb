# hostile (poison layer, marks): bf16-rounding, a 16-bit view made by an operator outside aten.
# The dtype poison covers aten's operators with a dtype argument; `inductor::_alloc_from_pool(pool,
# offset, dtype, size, stride)` (registered by libtorch at import) also takes one and makes a
# bfloat16/float16 view of a uint8 buffer. `copy_` (no dtype argument) then rounds float32 into
# that view, and the rounded bits are read back from the uint8 buffer: no aten operator ever sees
# a 16-bit float argument or result. The dtypes come from torch._prims_common (nothing spelled),
# and DisableTorchFunction hides the view from the checks' in-process watch.
# Expected verdict, marks: forbidden. Observed on main at 5997f41: passed.
import torch
import torch._prims_common as prims

FP16, BF16 = prims._low_precision_dtypes[0], prims._low_precision_dtypes[1]


def _rounded(x, dtype):
    flat = x.reshape(-1).contiguous()
    pool = torch.zeros(2 * flat.numel(), dtype=torch.uint8)
    with torch._C.DisableTorchFunction():
        view = torch.ops.inductor._alloc_from_pool(pool, 0, dtype, [flat.numel()], [1])
        view.copy_(flat)
        del view
    pairs = pool.reshape(-1, 2).to(torch.int64)
    return (pairs[:, 0] | (pairs[:, 1] << 8)).reshape(x.shape)  # little-endian 16-bit patterns


def to_bfloat16_bits(x):
    return _rounded(x, BF16)


def to_float16_bits(x):
    return _rounded(x, FP16)
