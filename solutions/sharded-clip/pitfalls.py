"""Known-wrong ways to clip sharded gradients. Each is a whole implementation a learner could
write; they differ from the reference in how the ranks' shares are combined, or in what a rank
with nothing to clip does. The pitfalls of the first kind handle an empty shard as the reference
does (it contributes 0), so that each makes exactly one mistake; the second kind (returning before
the collective, a stack that breaks on an empty shard) is what the empty-shard cases exist for,
and a real job would hang on each of them."""

import torch
import torch.distributed as dist

INF = float("inf")


def _grads(parameters):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _local_power(grads, p):
    """(sum of |g|^p, or the largest |g| for the inf-norm) over this rank's shard; 0 for a shard
    without entries, in the gradients' dtype (float32 when there is no gradient at all)."""
    value = torch.zeros((), dtype=grads[0].dtype if grads else torch.get_default_dtype())
    for g in grads:
        if g.numel():
            value = torch.maximum(value, g.detach().abs().max()) if p == INF else \
                value + g.detach().abs().pow(p).sum()
    return value


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


def _nothing_to_do(grads):
    return not any(g.numel() for g in grads)


def empty_returns_early(parameters, max_norm, norm_type=2.0):
    grads = _grads(parameters)
    if _nothing_to_do(grads):
        # torch.nn.utils.clip_grad_norm_'s own guard for an empty list, kept in a sharded setting
        return torch.tensor(0.0)
    return _scale(grads, _global(grads, float(norm_type)), max_norm)


def zero_norm_returns_early(parameters, max_norm, norm_type=2.0):
    grads, p = _grads(parameters), float(norm_type)
    if float(_local_power(grads, p)) == 0.0:
        return torch.tensor(0.0)  # "nothing to clip here", so no collective either
    return _scale(grads, _global(grads, p), max_norm)


def stack_of_nothing(parameters, max_norm, norm_type=2.0):
    grads, p = _grads(parameters), float(norm_type)
    # One value per tensor, then one stack: raises on a rank without a gradient (an empty stack), and
    # for the inf-norm on a zero-size gradient too (the maximum of nothing).
    parts = [g.detach().abs().max() if p == INF else g.detach().abs().pow(p).sum() for g in grads]
    local = torch.stack(parts)
    local = local.max() if p == INF else local.sum()
    return _scale(grads, _global_of(local, p), max_norm)


def _global_of(local, p):
    local = local.clone()
    dist.all_reduce(local, op=dist.ReduceOp.MAX if p == INF else dist.ReduceOp.SUM)
    return local if p == INF else local ** (1.0 / p)


def small_shard_returns_early(parameters, max_norm, norm_type=2.0):
    grads, p = _grads(parameters), float(norm_type)
    local = _local_power(grads, p)
    own = local if p == INF else local ** (1.0 / p)
    if float(own) <= max_norm:
        return own  # "my shard is short enough": no clipping, and no collective either
    return _scale(grads, _global(grads, p), max_norm)


def float_coefficient_without_eps(parameters, max_norm, norm_type=2.0):
    grads, p = _grads(parameters), float(norm_type)
    total = float(_global(grads, p))
    coef = max_norm / total  # no + 1e-6: ZeroDivisionError when every gradient is zero
    if coef < 1.0:
        for g in grads:
            g.mul_(coef)
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
    {
        "slug": "empty-shard-returns-early",
        "name": "a rank with no gradient returns without joining the collective",
        "impl": empty_returns_early,
        "library": "torch.nn.utils.clip_grad_norm_ (its early return of 0 for a list without gradients)",
        "explanation": "A rank whose shard holds no entry (no gradient at all, or only zero-size slices, as "
                       "when a parameter has fewer entries than there are ranks) returned at once. In one "
                       "process that early exit is harmless, and torch's own clip_grad_norm_ has it. Here "
                       "the other ranks then wait in an all_reduce this rank never joins: a real job hangs "
                       "until the collective times out. An empty shard must still take part, contributing 0.",
        "hint": "Every rank calls the collective, always: an empty shard contributes a zero tensor.",
    },
    {
        "slug": "zero-norm-returns-early",
        "name": "a rank whose gradient is zero returns without joining the collective",
        "impl": zero_norm_returns_early,
        "explanation": "A rank whose shard had norm 0 (all zeros, or nothing at all) decided there was "
                       "nothing to clip and returned before the all_reduce. Whether to clip is a property of "
                       "the whole model, not of one shard: the other ranks wait in a collective this rank "
                       "never joins, and the job hangs.",
        "hint": "Skip nothing before the collective: a zero shard simply contributes 0 to the sum.",
    },
    {
        "slug": "small-shard-returns-early",
        "name": "a rank whose own shard is below max_norm returns without joining the collective",
        "impl": small_shard_returns_early,
        "explanation": "A rank measured its own shard, found it below max_norm, and returned without clipping "
                       "and without the all_reduce. Its own shard being short says nothing about the model's "
                       "norm: where another rank's shard is large, that rank waits in a collective this one "
                       "never joins and the job hangs; where every shard is small, each rank returns its own "
                       "norm instead of the global one.",
        "hint": "Decide nothing before the collective: every rank all-reduces, then compares the global norm "
                "with max_norm.",
    },
    {
        "slug": "empty-shard-crash",
        "name": "an empty shard crashes the local norm (stack of nothing)",
        "impl": stack_of_nothing,
        "explanation": "The local value was built by stacking one number per gradient tensor (or indexing the "
                       "first one), which raises on a rank that holds no non-empty gradient. That rank dies "
                       "before the collective, while its peers wait in it. An empty shard is legal under "
                       "ZeRO and FSDP whenever there are fewer entries than ranks.",
        "hint": "Start the local sum (or maximum) from a zero tensor and add each gradient's part to it.",
    },
    {
        "slug": "no-epsilon",
        "name": "coefficient max_norm / total without the 1e-6 (0 / 0 on zero gradients)",
        "impl": float_coefficient_without_eps,
        "explanation": "The coefficient was max_norm / total, as a Python number, without the small constant "
                       "torch adds to the total. When every gradient is zero the total is 0 and the division "
                       "raises (a tensor division would give inf). torch computes max_norm / (total + 1e-6), "
                       "which is finite for a zero total and, capped at 1, leaves zero gradients alone.",
        "hint": "Divide by total + 1e-6, as clip_grad_norm_ does.",
    },
]


# A mistake in how the shards are combined often comes with the stack that breaks on an empty
# shard (the code was written before anyone thought of one). Such a pair is the other mistake
# with the stack's check in front of it: the stack raises where empty-shard-crash raises (before
# any collective), and elsewhere the other mistake runs unchanged. The ways of returning early
# leave nothing to stack, so they are alternatives to the crash, not partners.
_EARLY = {"empty-shard-returns-early", "zero-norm-returns-early", "small-shard-returns-early"}
COMBINE = "all"  # pairs are built only when a diagnosis asks for them


def _stacked_first(impl):
    def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
        grads, p = _grads(parameters), float(norm_type)
        torch.stack([g.detach().abs().max() if p == INF else g.detach().abs().pow(p).sum() for g in grads])
        return impl(parameters, max_norm, norm_type)
    return clip_sharded_grad_norm_


def combine(a, b):
    impls = {pitfall["slug"]: pitfall["impl"] for pitfall in PITFALLS}
    if "empty-shard-crash" not in (a, b):
        return None
    other = b if a == "empty-shard-crash" else a
    if other == "empty-shard-crash" or other in _EARLY or other not in impls:
        return None
    return _stacked_first(impls[other])

