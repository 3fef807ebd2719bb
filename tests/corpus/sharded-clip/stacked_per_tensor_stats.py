# expect: failed pitfall=empty-shard-crash
# source: a vectorised rewrite: one statistic per tensor, torch.stack, one reduction; assumes every rank holds at least one non-empty gradient
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    with torch.no_grad():
        grads = [param.grad for param in parameters if param.grad is not None]
        inf = norm_type == float("inf")
        stats = torch.stack([g.abs().amax() if inf else g.abs().pow(norm_type).sum() for g in grads])
        local = stats.amax() if inf else stats.sum()
        dist.all_reduce(local, op=dist.ReduceOp.MAX if inf else dist.ReduceOp.SUM)
        norm = local if inf else local.pow(1.0 / norm_type)
        torch._foreach_mul_(grads, torch.clamp(max_norm / (norm + 1e-6), max=1.0))
    return norm
