"""Reference: clipping by the global norm when every rank holds only a shard of the gradients."""

import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)

    # What this rank can compute alone: for a p-norm the sum of |g|^p over its entries (norms do
    # not add up, their p-th powers do); for the inf-norm its largest |g|.
    if norm_type == float("inf"):
        local = torch.stack([g.detach().abs().max() for g in grads if g.numel()]).max()
        op = dist.ReduceOp.MAX
    else:
        local = sum(g.detach().abs().pow(norm_type).sum() for g in grads)
        op = dist.ReduceOp.SUM

    # One collective makes the whole model's value known on every rank (in place, same on all).
    local = local.clone()
    dist.all_reduce(local, op=op)
    total = local if norm_type == float("inf") else local ** (1.0 / norm_type)

    # Every rank derives the same coefficient from the same total, so the shards are scaled alike,
    # as one process would scale the unsharded gradients. Capped at 1: clipping only shrinks.
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total
