"""Known-wrong ways to clip sharded gradients. Each is a whole implementation a learner could
write; they differ from the reference in how the ranks' shares are combined."""

import torch
import torch.distributed as dist

INF = float("inf")


def _grads(parameters):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _local_power(grads, p):
    """(sum of |g|^p, or the largest |g| for the inf-norm) over this rank's shard."""
    if p == INF:
        return torch.stack([g.detach().abs().max() for g in grads]).max().clone()
    return sum(g.detach().abs().pow(p).sum() for g in grads).clone()


def _scale(grads, total, max_norm):
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total


def _global(grads, p, reduce_op_for_inf=dist.ReduceOp.MAX, divide_by_world=False):
    value = _local_power(grads, p)
    dist.all_reduce(value, op=reduce_op_for_inf if p == INF else dist.ReduceOp.SUM)
    if p == INF:
        return value
    if divide_by_world:
        value = value / dist.get_world_size()
    return value ** (1.0 / p)


def local_norm(parameters, max_norm, norm_type=2.0):
    grads, p = _grads(parameters), float(norm_type)
    local = _local_power(grads, p)
    total = local if p == INF else local ** (1.0 / p)
    return _scale(grads, total, max_norm)  # no collective at all: each shard by its own norm


def summed_norms(parameters, max_norm, norm_type=2.0):
    grads, p = _grads(parameters), float(norm_type)
    local = _local_power(grads, p)
    norm = local if p == INF else local ** (1.0 / p)
    dist.all_reduce(norm)  # norms added up: sqrt(a) + sqrt(b) instead of sqrt(a + b)
    return _scale(grads, norm, max_norm)


def averaged_powers(parameters, max_norm, norm_type=2.0):
    grads, p = _grads(parameters), float(norm_type)
    return _scale(grads, _global(grads, p, divide_by_world=True), max_norm)


def summed_inf(parameters, max_norm, norm_type=2.0):
    grads, p = _grads(parameters), float(norm_type)
    return _scale(grads, _global(grads, p, reduce_op_for_inf=dist.ReduceOp.SUM), max_norm)


def rank0_norm(parameters, max_norm, norm_type=2.0):
    grads, p = _grads(parameters), float(norm_type)
    local = _local_power(grads, p)
    total = local if p == INF else local ** (1.0 / p)
    dist.broadcast(total, src=0)  # rank 0's shard decides for everyone
    return _scale(grads, total, max_norm)


def no_clamp(parameters, max_norm, norm_type=2.0):
    grads, p = _grads(parameters), float(norm_type)
    total = _global(grads, p)
    for g in grads:
        g.mul_(max_norm / (total + 1e-6))
    return total


PITFALLS = [
    {
        "slug": "local-norm",
        "name": "each rank clipped by its own shard's norm",
        "impl": local_norm,
        "explanation": "Every rank measured the norm of the gradients it holds and clipped them by that. "
                       "The shards are then scaled by different factors (a rank holding a small piece "
                       "is barely touched) and the update no longer points where the gradient did, "
                       "exactly like clipping tensor by tensor in one process. The norm that matters "
                       "is the whole model's.",
        "hint": "No rank can clip alone: combine what every rank holds into one global norm with a "
                "collective first.",
    },
    {
        "slug": "summed-norms",
        "name": "norms all-reduced instead of p-th powers",
        "impl": summed_norms,
        "explanation": "Each rank computed the norm of its shard and the norms were summed. Norms do not "
                       "add up: the 2-norm of the whole is sqrt(a^2 + b^2), not a + b, so the total came "
                       "out too large and the gradients were clipped too hard.",
        "hint": "All-reduce the sum of |g|^p (the squares for p = 2), and take the p-th root after.",
    },
    {
        "slug": "averaged",
        "name": "AVG instead of SUM",
        "impl": averaged_powers,
        "explanation": "The shards' sums of p-th powers were averaged over the ranks instead of summed. "
                       "Each shard holds a different part of the model, so the whole is their sum; the "
                       "average makes the total R^(1/p) times too small and clips too little.",
        "hint": "The p-th power of the global norm is the sum of the shards' p-th powers: ReduceOp.SUM.",
    },
    {
        "slug": "summed-inf",
        "name": "SUM for the inf-norm",
        "impl": summed_inf,
        "explanation": "For norm_type = inf the shards' largest entries were added. The inf-norm of the "
                       "whole is the largest entry anywhere: the maximum of the shards' maxima.",
        "hint": "For the inf-norm the collective is a maximum: ReduceOp.MAX.",
    },
    {
        "slug": "rank0-norm",
        "name": "rank 0's norm used by every rank",
        "impl": rank0_norm,
        "explanation": "Rank 0 measured the norm of its own shard and broadcast it, so every rank used "
                       "the same coefficient, but one computed from rank 0's piece of the model only. "
                       "Every rank has to contribute to the norm, not just rank 0.",
        "hint": "A broadcast shares one rank's number; an all_reduce combines every rank's.",
    },
    {
        "slug": "no-clamp",
        "name": "coefficient not capped at 1",
        "impl": no_clamp,
        "explanation": "The gradients were always scaled by max_norm / total, so when the global norm was "
                       "already below max_norm they were scaled up. Clipping only ever shrinks.",
        "hint": "Cap the coefficient at 1: torch.clamp(max_norm / (total + 1e-6), max=1.0).",
    },
]
