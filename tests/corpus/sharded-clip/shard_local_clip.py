# expect: failed pitfall=local-norm
# source: a single-process clip helper reused as is on each rank's shard, with a float coefficient
import math


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    if math.isinf(norm_type):
        total = max(float(g.abs().max()) for g in grads)
    else:
        total = sum(float(g.abs().pow(norm_type).sum()) for g in grads) ** (1.0 / norm_type)
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / (total + 1e-6))
    return total
