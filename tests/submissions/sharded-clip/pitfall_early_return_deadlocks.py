# expect: failed pitfall=small-shard-returns-early
# Returns its own shard's norm, skipping the all_reduce, when that shard alone is below max_norm
# (its own pitfall); where the other shard is not small, the other rank waits
# in the all_reduce alone and that case is reported as a deadlock.
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    local = sum((g.abs() ** norm_type).sum() for g in grads)
    if float(local) ** (1 / norm_type) <= max_norm:
        return local ** (1 / norm_type)
    dist.all_reduce(local)
    total = local ** (1 / norm_type)
    for g in grads:
        g.mul_(torch.clamp(max_norm / (total + 1e-6), max=1.0))
    return total
