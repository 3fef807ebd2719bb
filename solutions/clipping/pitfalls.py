"""Known-wrong variants of clip_grad_norm_. Each one is a whole implementation that a learner
could plausibly write, and the judge must name it when it sees it."""

import torch


def _grads(parameters):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _total(grads, norm_type):
    norm_type = float(norm_type)
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]), norm_type)


def per_tensor(parameters, max_norm, norm_type=2.0):
    grads = _grads(parameters)
    total = _total(grads, norm_type)
    for g in grads:
        norm = torch.linalg.vector_norm(g, float(norm_type))
        g.mul_(torch.clamp(max_norm / (norm + 1e-6), max=1.0))
    return total


def no_clamp(parameters, max_norm, norm_type=2.0):
    grads = _grads(parameters)
    total = _total(grads, norm_type)
    for g in grads:
        g.mul_(max_norm / (total + 1e-6))
    return total


def norm_after_clipping(parameters, max_norm, norm_type=2.0):
    grads = _grads(parameters)
    total = _total(grads, norm_type)
    for g in grads:
        g.mul_(torch.clamp(max_norm / (total + 1e-6), max=1.0))
    return _total(grads, norm_type)


def sum_of_norms(parameters, max_norm, norm_type=2.0):
    grads = _grads(parameters)
    norm_type = float(norm_type)
    norms = [torch.linalg.vector_norm(g, norm_type) for g in grads]
    total = torch.stack(norms).max() if norm_type == float("inf") else torch.stack(norms).sum()
    for g in grads:
        g.mul_(torch.clamp(max_norm / (total + 1e-6), max=1.0))
    return total


def nan_on_zero(parameters, max_norm, norm_type=2.0):
    grads = _grads(parameters)
    total = _total(grads, norm_type)
    # min(total, max_norm) / total is 0/0 when every gradient is zero
    coef = torch.clamp(total, max=max_norm) / total
    for g in grads:
        g.mul_(coef)
    return total


def new_tensors(parameters, max_norm, norm_type=2.0):
    grads = _grads(parameters)
    total = _total(grads, norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    clipped = [g * coef for g in grads]  # computed, but never written back to .grad
    del clipped
    return total


PITFALLS = [
    {
        "slug": "per-tensor",
        "name": "per-tensor clipping",
        "impl": per_tensor,
        "explanation": "Each tensor was clipped by its own norm. Every piece ends up short enough, but "
                       "the pieces are scaled by different factors, so the update no longer points where "
                       "the gradient did. clip_grad_norm_ measures one norm over all parameters and scales "
                       "every gradient by the same factor.",
        "hint": "Compute a single total norm over every gradient first, then one coefficient for all of them.",
    },
    {
        "slug": "no-clamp",
        "name": "scaling up below max_norm (no clamp to 1)",
        "impl": no_clamp,
        "explanation": "The gradients were multiplied by max_norm / total even when the total was already "
                       "below max_norm, which stretches small gradients up to max_norm. Clipping only ever "
                       "shrinks: the coefficient is capped at 1.",
        "hint": "Use min(1, max_norm / (total + 1e-6)) as the factor.",
    },
    {
        "slug": "norm-after-clipping",
        "name": "returning the norm after clipping",
        "impl": norm_after_clipping,
        "explanation": "The gradients are right, but the returned value is the norm after scaling, which is "
                       "just max_norm whenever clipping happened. Callers log the returned value to watch for "
                       "exploding gradients, so it must be the norm measured before clipping.",
        "hint": "Keep the total you measured before scaling and return that.",
    },
    {
        "slug": "sum-of-norms",
        "name": "summing per-tensor norms",
        "impl": sum_of_norms,
        "explanation": "The total was the sum of the per-tensor norms. For p = 2 the norms of the pieces "
                       "combine as the square root of the sum of their squares: with [3, 4] and [12] that is "
                       "13, not 5 + 12 = 17.",
        "hint": "Square the per-tensor norms, sum them, then take the square root (or take the norm of the "
                "stacked per-tensor norms).",
    },
    {
        "slug": "nan-on-zero",
        "name": "NaN on all-zero gradients",
        "impl": nan_on_zero,
        "explanation": "When every gradient is zero the total is 0 and the coefficient was computed as 0/0, "
                       "which is NaN, so the gradients became NaN. The +1e-6 in max_norm / (total + 1e-6), "
                       "or a clamp, keeps this finite.",
        "hint": "Make sure nothing divides by the total when it can be zero.",
    },
    {
        "slug": "new-tensors",
        "name": "returning new tensors without touching .grad",
        "impl": new_tensors,
        "explanation": "The scaled gradients were computed but never written back, so p.grad still holds the "
                       "unclipped values and the optimizer never sees the clipping. The trailing underscore "
                       "in clip_grad_norm_ means in place.",
        "hint": "Use p.grad.mul_(coef), or assign the scaled tensor back to p.grad.",
    },
]
