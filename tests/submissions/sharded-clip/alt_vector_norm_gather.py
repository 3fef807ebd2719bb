# expect: passed
# Each rank sends its shard's vector_norm; every rank gathers them all and combines the norms
# correctly (a norm of norms), then scales with torch._foreach_mul_.
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    p = float(norm_type)
    mine = torch.linalg.vector_norm(torch.cat([g.reshape(-1) for g in grads]), p).reshape(1)
    everyone = [torch.empty_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    total = torch.linalg.vector_norm(torch.cat(everyone), p)
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    torch._foreach_mul_(grads, coef.item())
    return total
