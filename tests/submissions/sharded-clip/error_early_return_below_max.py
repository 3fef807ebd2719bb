# expect: failed
# Returns before the all_reduce when its own shard is small enough; the other rank waits in the
# all_reduce alone: a deadlock where one shard is small and the other is not.
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
