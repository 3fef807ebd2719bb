# expect: passed
# source: independent answer in the style of FSDP's clip_grad_norm_: local norm first, raised to the p-th power before the all_reduce, then the root
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    nonempty = [g for g in grads if g.numel() > 0]
    if nonempty:
        local_norm = torch.linalg.vector_norm(
            torch.stack([torch.linalg.vector_norm(g, norm_type) for g in nonempty]), norm_type)
    else:  # FSDP too all-reduces a zero local norm from a rank that holds no gradient
        local_norm = torch.zeros((), dtype=grads[0].dtype if grads else torch.float32)
    if norm_type == float("inf"):
        total_norm = local_norm.clone()
        dist.all_reduce(total_norm, op=dist.ReduceOp.MAX)
    else:
        total_norm = local_norm ** norm_type
        dist.all_reduce(total_norm)
        total_norm = total_norm ** (1.0 / norm_type)
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = torch.clamp(clip_coef, max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.dtype))
    return total_norm
