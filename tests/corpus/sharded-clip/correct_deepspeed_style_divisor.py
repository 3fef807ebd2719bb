# expect: passed
# source: independent answer shaped like DeepSpeed ZeRO's unscale-and-clip step: a divisor (total + 1e-6) / max_norm, applied only when above 1; every rank reduces, an empty partition contributing 0
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    partition = [p.grad for p in parameters if p.grad is not None and p.grad.numel() > 0]
    kind = float(norm_type)
    dtype = next((p.grad.dtype for p in parameters if p.grad is not None), torch.float32)
    if kind == float("inf"):
        local = torch.tensor(max((float(g.abs().max()) for g in partition), default=0.0), dtype=dtype)
        dist.all_reduce(local, op=dist.ReduceOp.MAX)
        total = local
    else:
        local = torch.tensor(0.0, dtype=dtype)
        for g in partition:
            local = local + torch.sum(torch.abs(g) ** kind)
        dist.all_reduce(local, op=dist.ReduceOp.SUM)
        total = local ** (1.0 / kind)
    divisor = (total + 1e-6) / max_norm
    if divisor > 1:
        for g in partition:
            g.div_(divisor)
    return total
