# hostile (poison layer, marks): bf16-rounding, a review of the float16 encoders' poison (issue 28).
# both entries through torch's NNC IR interpreter (te.Dtype.BFloat16 / te.Dtype.Half
# casts done in C++ by c10::BFloat16 / c10::Half), written without any refused spelling.
# Expected verdict, marks: forbidden, naming torch.float16 (NNC is absent from a marked bf16-rounding run;
# it passed before).
import torch

te = torch._C._te


def _cast_bits(x, kind):
    flat = x.contiguous().reshape(-1).to(torch.float32)
    if flat.numel() == 0:
        return torch.zeros(x.shape, dtype=torch.int64)
    dn = te.ExprHandle.int(flat.numel())
    a = te.BufHandle("A", [dn], te.Dtype.Float)
    out = te.Compute("X", [dn], lambda i: te.Cast.make(kind, a.load([i])))
    nest = te.LoopNest([out])
    nest.prepare_for_codegen()
    gen = te.construct_codegen("ir_eval", te.simplify(nest.root_stmt()), [te.BufferArg(a), te.BufferArg(out)])
    res = torch.zeros(flat.numel(), dtype=torch.int16)
    gen.call([flat, res])
    return (res.to(torch.int64) & 0xFFFF).reshape(x.shape)


def to_bfloat16_bits(x):
    return _cast_bits(x, te.Dtype.BFloat16)


def to_float16_bits(x):
    return _cast_bits(x, te.Dtype.Half)
