# expect: passed
# source: independent answer: per-rank partial results exchanged as Python floats with all_gather_object, combined in Python
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    p = float(norm_type)
    if p == float("inf"):
        part = max((float(g.abs().max()) for g in grads if g.numel()), default=0.0)
    else:
        part = sum(float(g.double().abs().pow(p).sum()) for g in grads)
    parts = [None] * dist.get_world_size()
    dist.all_gather_object(parts, part)
    total = max(parts) if p == float("inf") else sum(parts) ** (1 / p)
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g.mul_(coef)
    return total
