# expect: failed pitfall=summed-inf
# source: one code path for every norm type: the local statistic always goes through a SUM all_reduce, the inf-norm's maximum included
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    inf = norm_type == float("inf")
    stat = torch.zeros((), dtype=grads[0].dtype if grads else torch.float32)
    for g in (g for g in grads if g.numel()):
        stat = torch.maximum(stat, g.abs().max()) if inf else stat + g.abs().pow(norm_type).sum()
    dist.all_reduce(stat, op=dist.ReduceOp.SUM)
    total = stat if inf else stat.pow(1.0 / norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total
