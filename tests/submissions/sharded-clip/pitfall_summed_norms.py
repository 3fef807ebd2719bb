# expect: failed pitfall=summed-norms
# Shares the shard norms and adds them, as if norms were additive.
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    norm = torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads]), norm_type)
    dist.all_reduce(norm, op=dist.ReduceOp.SUM)
    scale = min(1.0, max_norm / (float(norm) + 1e-6))
    for g in grads:
        g.mul_(scale)
    return norm
