# expect: failed pitfall=zero-norm-returns-early
# source: an "optimisation" seen in hand-written ZeRO code: a shard whose squared sum is 0 cannot change the clip, so the rank skips the collective
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    gs = [q.grad for q in parameters if q.grad is not None]
    dt = gs[0].dtype if gs else torch.float32
    is_inf = norm_type == float("inf")
    part = torch.tensor(0.0, dtype=dt)
    for g in gs:
        if g.numel() == 0:
            continue
        part = torch.maximum(part, g.abs().max()) if is_inf else part + (g.abs() ** norm_type).sum()
    if part.item() == 0.0:
        return part  # nothing on this rank to scale
    dist.all_reduce(part, op=dist.ReduceOp.MAX if is_inf else dist.ReduceOp.SUM)
    total = part if is_inf else part ** (1.0 / norm_type)
    factor = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in gs:
        g.mul_(factor)
    return total
