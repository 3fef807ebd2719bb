# expect: passed
# source: independent answer shaped like Megatron-LM's clip_grad_norm_fp32: squares accumulated into a one-element buffer every rank all-reduces (empty or not), total as a Python float, "if clip_coeff < 1.0" guard
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    buf = torch.zeros(1, dtype=torch.float64)
    for g in grads:
        if g.numel() == 0:
            continue
        if norm_type == float("inf"):
            buf[0] = max(buf[0].item(), g.abs().max().item())
        else:
            buf += torch.norm(g.double(), norm_type) ** norm_type
    dist.all_reduce(buf, op=dist.ReduceOp.MAX if norm_type == float("inf") else dist.ReduceOp.SUM)
    total_norm = buf.item() if norm_type == float("inf") else buf.item() ** (1.0 / norm_type)
    clip_coeff = max_norm / (total_norm + 1.0e-6)
    if clip_coeff < 1.0:
        for g in grads:
            g.mul_(clip_coeff)
    return total_norm
