# expect: failed pitfall=summed-norms
# source: look-alike of an old model-parallel helper that all-reduces the per-rank total norm (not its square) with SUM
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = 0.0
    for g in grads:
        total_norm += float(g.norm(norm_type)) ** norm_type
    total_norm = torch.tensor(total_norm ** (1.0 / norm_type), dtype=grads[0].dtype if grads else torch.float32)
    dist.all_reduce(total_norm, op=dist.ReduceOp.SUM)
    clip_coef = max_norm / (total_norm + 1e-6)
    if clip_coef < 1:
        for g in grads:
            g.mul_(clip_coef)
    return total_norm
