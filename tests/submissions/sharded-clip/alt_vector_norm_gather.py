# expect: passed
# Each rank sends its shard's vector_norm; every rank gathers them all and combines the norms
# correctly (a norm of norms), then scales with torch._foreach_mul_.
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    p = float(norm_type)
    # One extra zero entry changes no p-norm and no maximum, and gives an empty shard a vector to measure.
    zero = torch.zeros(1, dtype=grads[0].dtype if grads else torch.float32)
    mine = torch.linalg.vector_norm(torch.cat([g.reshape(-1) for g in grads] + [zero]), p).reshape(1)
    everyone = [torch.empty_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    total = torch.linalg.vector_norm(torch.cat(everyone), p)
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    if grads:  # _foreach_mul_ refuses an empty list
        torch._foreach_mul_(grads, coef.item())
    return total
