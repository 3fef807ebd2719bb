# expect: failed pitfall=averaged+empty-shard-crash
# source: habit from loss averaging: the shared sum of squares is divided by the world size, like a mean; torch.stack of the per-tensor values also raises on a rank with an empty shard
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    if norm_type == float("inf"):
        m = torch.stack([g.abs().max() for g in grads]).max()
        dist.all_reduce(m, op=dist.ReduceOp.MAX)
        total = m
    else:
        s = torch.stack([g.abs().pow(norm_type).sum() for g in grads]).sum()
        dist.all_reduce(s)
        total = (s / dist.get_world_size()) ** (1.0 / norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total
