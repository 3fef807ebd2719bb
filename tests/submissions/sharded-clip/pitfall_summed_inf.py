# expect: failed pitfall=summed-inf
# Right for every p, but the inf-norm's per-shard maxima go through the same SUM.
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    if norm_type == float("inf"):
        part = max(g.abs().max() for g in grads).clone()
    else:
        part = torch.stack([(g.abs() ** norm_type).sum() for g in grads]).sum()
    dist.all_reduce(part)
    total = part if norm_type == float("inf") else part ** (1 / norm_type)
    for g in grads:
        g.mul_(torch.clamp(max_norm / (total + 1e-6), max=1.0))
    return total
