# hostile (poison layer, marks): bf16-rounding, a second review of issue 28's float16 poison.
# OBSERVED (marked run, 20:09 UTC): PASSED All checks passed (unmarked: PASSED). FINDING (same gaps, torch.asarray).
# scan off, forbidden (the builtin's C function is the exit stub; copy_ into a 16-bit tensor ends the run).
## Attack (variant: torch.asarray over a memoryview instead of frombuffer): torch's own asarray builtin, found by value in torch.jit._builtins._builtin_ops (the
# TorchScript builtin table lists every torch._C._VariableFunctions function with its aten name;
# the name is compared as text built at run time, never written as an attribute), called from C
# through functools.partial (no c_call profile event for a partial, nor for what it calls), with
# the 16-bit dtypes from torch.get_autocast_dtype ('cpu' -> bfloat16, 'cuda' -> float16), under
# torch._C.DisableTorchFunction (the checks' TorchFunctionMode watch sees nothing). The 16-bit
# tensor views a bytearray; copy_ (no ScalarType argument: not a poisoned operator) rounds float32
# into it with torch's own cast; the bytearray then holds the patterns.
# Expected verdict if the judge holds: forbidden (or refused by the scan). PASSED = finding.
import functools

import torch
import torch.jit._builtins as _jb

_jb._get_builtin_table()
_WANT = "aten::" + "as" + "array"
_MAKE = [f for f, n in _jb._builtin_ops if n == _WANT][0]


def _bits(x, device):
    flat = x.reshape(-1).contiguous()
    n = flat.numel()
    if n == 0:
        return torch.zeros(x.shape, dtype=torch.int64)
    buf = bytearray(2 * n)
    with torch._C.DisableTorchFunction():
        make = functools.partial(_MAKE, memoryview(buf), dtype=torch.get_autocast_dtype(device))
        t = make()
        t.copy_(flat)
        del t
    out = [buf[2 * i] | (buf[2 * i + 1] << 8) for i in range(n)]
    return torch.tensor(out, dtype=torch.int64).reshape(x.shape)


def to_bfloat16_bits(x):
    return _bits(x, "cpu")


def to_float16_bits(x):
    return _bits(x, "cuda")
