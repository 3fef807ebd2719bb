# hostile (poison layer, marks): bf16-rounding, the casts done in another thread, where the checks'
# torch-function mode (thread-local) does not look: in practice nothing in the process notices the
# 16-bit tensors, so this PASSES practice (a deterrent's limit). The dtype objects come from the
# legacy classes' attributes (no dtype name is spelled). For marks the tensors cannot exist in any
# thread: the dispatcher's CPU kernels are process-wide.
import threading

import torch

_TYPES = {"bf16": torch.BFloat16Tensor.dtype, "fp16": torch.HalfTensor.dtype}


def _in_thread(x, which):
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("bits", x.to(_TYPES[which]).view(torch.int16)))
    worker.start()
    worker.join()
    return out["bits"]


def to_bfloat16_bits(x):
    return _in_thread(x, "bf16")


def to_float16_bits(x):
    return _in_thread(x, "fp16")
