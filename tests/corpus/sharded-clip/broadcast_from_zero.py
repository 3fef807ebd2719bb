# expect: failed pitfall=rank0-norm
# source: "rank 0 decides, the others follow": the coefficient is rank 0's own norm, broadcast so that all ranks agree
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    norm = torch.linalg.vector_norm(torch.cat([g.reshape(-1) for g in grads]), norm_type)
    dist.broadcast(norm, src=0)
    for g in grads:
        g.mul_(torch.clamp(max_norm / (norm + 1e-6), max=1.0))
    return norm
