# expect: failed pitfall=no-clamp+empty-shard-crash
# source: right global norm, but the gradients are rescaled to max_norm even when they were smaller; torch.stack of the per-tensor values also raises on a rank with an empty shard
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    if norm_type == float("inf"):
        t = torch.stack([g.abs().max() for g in grads]).max()
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    else:
        t = torch.stack([g.abs().pow(norm_type).sum() for g in grads]).sum()
        dist.all_reduce(t)
        t = t.pow(1.0 / norm_type)
    for g in grads:
        g.mul_(max_norm / (t + 1e-6))
    return t
