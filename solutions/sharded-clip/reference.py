"""Reference: clipping by the global norm when every rank holds only a shard of the gradients."""

import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)

    # A rank may hold nothing (no gradient at all, or only zero-size slices: a parameter with
    # fewer entries than there are ranks). It must still join the collective below, or its peers
    # wait in it forever; it contributes 0, in its gradients' dtype (float32 when it has none).
    dtype = grads[0].dtype if grads else torch.get_default_dtype()
    local = torch.zeros((), dtype=dtype)

    # What this rank can compute alone: for a p-norm the sum of |g|^p over its entries (norms do
    # not add up, their p-th powers do); for the inf-norm its largest |g|.
    for g in grads:
        if g.numel() == 0:
            continue
        if norm_type == float("inf"):
            local = torch.maximum(local, g.detach().abs().max())
        else:
            local = local + g.detach().abs().pow(norm_type).sum()
    op = dist.ReduceOp.MAX if norm_type == float("inf") else dist.ReduceOp.SUM

    # One collective makes the whole model's value known on every rank (in place, same on all).
    dist.all_reduce(local, op=op)
    total = local if norm_type == float("inf") else local ** (1.0 / norm_type)

    # Every rank derives the same coefficient from the same total, so the shards are scaled alike,
    # as one process would scale the unsharded gradients. Capped at 1: clipping only shrinks.
    # The 1e-6 keeps an all-zero gradient (total 0) from becoming 0 / 0.
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total
