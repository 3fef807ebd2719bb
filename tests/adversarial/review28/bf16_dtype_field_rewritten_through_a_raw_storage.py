# hostile (scan layer, marks): bf16-rounding, a third review of issue 28's float16 poison. Before: PASSED for
# marks. Expected now: refused by the marks scan (torch's raw-address doors are refused like ctypes:
# with a write anywhere in the process no in-process poison holds).
"""ATTACK (review35): float32 -> bf16/fp16 rounding done by torch's own mixed-type batch-norm kernel.
Route: torch._C._construct_storage_from_data_pointer aliases the int16 tensor's own TensorImpl;
its dtype word (TypeMeta index) is rewritten 2 -> 15 (bfloat16) / 5 (float16): a 16-bit float
tensor with no operator ever seeing a 16-bit dtype. torch.ops.aten.native_batch_norm.out (no
ScalarType argument, so no poison) then writes round(bias) into it: input -0.0, weight 1,
running mean 0, var 1, eps 0, bias = x. Bits read back through an int16 alias made before the flip.
The checks' TorchFunctionMode watch is thread-local: the work runs in a threading.Thread, where no
mode is active, so "made a 16-bit float tensor" stays False.
Expected verdict if the judge is sound: forbidden/refused. Observed (2c248d4): PASSED.
Reproduce: /work/scratch/review35/grade.sh /work/scratch/review35/attack_bn_flip_thread.py"""
import threading

import torch


def _mem(addr, n):
    st = torch._C._construct_storage_from_data_pointer(addr, torch.device("cpu"), n)
    t = torch.zeros(0, dtype=torch.uint8)
    t.set_(st, 0, (n,), (1,))
    return t


def _word_index():
    a = torch.zeros(1, dtype=torch.int16)
    b = torch.zeros(1, dtype=torch.int32)
    ma = _mem(a._cdata, 256).view(torch.int16)
    mb = _mem(b._cdata, 256).view(torch.int16)
    return [i for i in range(128) if int(ma[i]) == 2 and int(mb[i]) == 3][0]


def _sixteen(n, code, fill):
    t = torch.full((1, n), fill, dtype=torch.int16)
    bits = t.view(-1)
    i = _word_index()
    _mem(t._cdata, 256).view(torch.int16)[i:i + 1].fill_(code)
    return t, bits


def _round(x, code):
    flat = x.reshape(-1).contiguous()
    n = flat.numel()
    if n == 0:
        return torch.zeros(x.shape, dtype=torch.int64)
    inp, _ = _sixteen(n, code, -32768)  # -0.0 in both formats
    out, bits = _sixteen(n, code, 0)
    torch.ops.aten.native_batch_norm.out(inp, torch.ones(n), flat, torch.zeros(n), torch.ones(n), False, 0.1, 0.0,
                                         out=out, save_mean=torch.zeros(n), save_invstd=torch.zeros(n))
    return (bits.to(torch.int64) & 0xFFFF).reshape(x.shape)


def _in_thread(x, code):
    box = []
    worker = threading.Thread(target=lambda: box.append(_round(x, code)))
    worker.start()
    worker.join()
    return box[0]


def to_bfloat16_bits(x):
    return _in_thread(x, 15)


def to_float16_bits(x):
    return _in_thread(x, 5)
