# hostile (poison layer, marks): bf16-rounding, a review of the float16 encoders' poison (issue 28).
# torch's NNC (TensorExpr) IR interpreter rounds float32 -> half in C++ (c10::Half),
# past the dispatcher poison: te.Cast.make(te.Dtype.Half, A.load([i])) stored into an int16 tensor
# handed to SimpleIREvaluator. to_bfloat16_bits is honest integer code.
# Expected verdict, marks: forbidden, naming torch.float16 (NNC is absent from a marked bf16-rounding run;
# it passed before).
import torch


def to_bfloat16_bits(x):
    u = x.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return torch.where(nan, (u >> 16) | 0x40, r)


def to_float16_bits(x):
    te = torch._C._te
    flat = x.contiguous().reshape(-1).to(torch.float32)
    n = max(flat.numel(), 1)
    if flat.numel() == 0:
        return torch.zeros(x.shape, dtype=torch.int64)
    dn = te.ExprHandle.int(n)
    a = te.BufHandle("A", [dn], te.Dtype.Float)
    out = te.Compute("X", [dn], lambda i: te.Cast.make(te.Dtype.Half, a.load([i])))
    nest = te.LoopNest([out])
    nest.prepare_for_codegen()
    gen = te.construct_codegen("ir_eval", te.simplify(nest.root_stmt()), [te.BufferArg(a), te.BufferArg(out)])
    res = torch.zeros(n, dtype=torch.int16)
    gen.call([flat, res])
    return (res.to(torch.int64) & 0xFFFF).reshape(x.shape)
