# hostile (scan layer, marks): bf16-rounding, a third review of issue 28's float16 poison. Before: PASSED for
# marks. Expected now: refused by the marks scan (torch's raw-address doors are refused like ctypes:
# with a write anywhere in the process no in-process poison holds).
"""ATTACK (review35): as attack_bn_flip_thread.py, without torch._C._construct_storage_from_data_pointer:
/proc/self/mem is READ (the sandbox refuses writing it, not reading) to copy a real StorageImpl; the
copy, with its data pointer and size replaced, is handed to torch.UntypedStorage._set_cdata, and
Tensor.set_ over it gives a uint8 tensor over any address. The int16 tensor's TypeMeta word is
rewritten to bfloat16/float16 through it; mixed-type native_batch_norm.out rounds into it; the work
runs in a thread (the checks' TorchFunctionMode watch is thread-local).
Expected verdict if the judge is sound: forbidden/refused. Observed (2c248d4): PASSED.
Reproduce: /work/scratch/review35/grade.sh /work/scratch/review35/attack_bn_setcdata_thread.py"""
import threading

import torch


def _peek(addr, n):
    with open("/proc/self/mem", "rb", buffering=0) as f:
        f.seek(addr)
        return f.read(n)


_KEEP = []


def _arbitrary(addr, n):
    real = torch.zeros(64, dtype=torch.uint8).untyped_storage()
    w = torch.tensor(list(_peek(real._cdata, 128)), dtype=torch.uint8).view(torch.int64).clone()
    w[1] = 0x0000000100100000  # refcount: never freed
    w[2] = addr                 # data pointer
    w[4] = 0                    # no deleter context
    w[6] = n                    # size in bytes
    w[12:16] = 0                # no Python object slot
    fake = torch.UntypedStorage(0)
    fake._set_cdata(w.data_ptr())
    t = torch.zeros(0, dtype=torch.uint8)
    t.set_(fake, 0, (n,), (1,))
    _KEEP.append((w, fake, real))
    return t


def _poke(addr, data):
    _arbitrary(addr, len(data)).copy_(torch.tensor(list(data), dtype=torch.uint8))


def _word_offset():
    a = torch.zeros(1, dtype=torch.int16)
    b = torch.zeros(1, dtype=torch.int32)
    ma, mb = _peek(a._cdata, 256), _peek(b._cdata, 256)
    return [i for i in range(0, 256, 2) if ma[i:i + 2] == bytes([2, 0]) and mb[i:i + 2] == bytes([3, 0])][0]


def _sixteen(n, code, fill):
    t = torch.full((1, n), fill, dtype=torch.int16)
    bits = t.view(-1)
    _poke(t._cdata + _word_offset(), bytes([code, 0]))
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
