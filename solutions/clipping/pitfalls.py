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
    # summed for every p, the inf-norm included (a learner who takes the max for inf agrees with
    # this everywhere they fail, so both are named; for p = 1 the sum happens to be right)
    total = torch.stack(norms).sum()
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


def _clip_by(grads, total, max_norm):
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))
    return total


def l2_whatever_norm_type(parameters, max_norm, norm_type=2.0):
    # fairseq.utils.clip_grad_norm_(params, max_norm) has no norm_type: always the 2-norm
    grads = _grads(parameters)
    norms = [torch.linalg.vector_norm(g, 2.0) for g in grads]
    return _clip_by(grads, torch.linalg.vector_norm(torch.stack(norms), 2.0), max_norm)


def no_absolute_value(parameters, max_norm, norm_type=2.0):
    grads = _grads(parameters)
    p = float(norm_type)
    if p == float("inf"):
        total = torch.stack([g.max() for g in grads]).max()  # the largest g, not the largest |g|
    else:
        total = sum((g ** p).sum() for g in grads) ** (1.0 / p)  # g ** p, not |g| ** p
    return _clip_by(grads, total, max_norm)


def max_of_norms(parameters, max_norm, norm_type=2.0):
    # the largest per-tensor norm taken for the total: right for inf only
    grads = _grads(parameters)
    norms = [torch.linalg.vector_norm(g, float(norm_type)) for g in grads]
    return _clip_by(grads, torch.stack(norms).max(), max_norm)


def default_inf_norm(parameters, max_norm, norm_type=float("inf")):
    grads = _grads(parameters)
    return _clip_by(grads, _total(grads, norm_type), max_norm)


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
                       "13, not 5 + 12 = 17. For inf the total is the largest of the per-tensor maxima, not "
                       "their sum (only for p = 1 does the sum happen to be right).",
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
    {
        "slug": "l2-only",
        "name": "the 2-norm whatever norm_type says (fairseq's convention)",
        "library": "fairseq",
        "convention": True,
        "impl": l2_whatever_norm_type,
        "explanation": "The total was the 2-norm although norm_type asked for another p. That is fairseq's "
                       "clip_grad_norm_ (fairseq.utils), which has no norm_type argument at all: it always "
                       "measures sqrt(sum of g^2) over every gradient and otherwise clips like "
                       "torch, with max_norm / (total + 1e-6) capped at 1. This exercise follows "
                       "torch.nn.utils.clip_grad_norm_, where norm_type = p means (sum of |g|^p)^(1/p) over "
                       "every entry and inf means the largest |g|: with p = 1 and gradients [1, -2] and [3] the "
                       "total is 6, not sqrt(14) = 3.74; with p = inf it is 3.",
        "hint": "Use norm_type: torch.linalg.vector_norm(g, norm_type) per tensor, then the same p-norm of those "
                "norms (max for inf).",
    },
    {
        "slug": "no-abs",
        "name": "p-norm without absolute values",
        "impl": no_absolute_value,
        "explanation": "The p-norm was computed from g ** p instead of |g| ** p (and the inf-norm as the largest g "
                       "instead of the largest |g|). For p = 2 the signs do not matter, which is why this "
                       "looks right at first, but for p = 1 negative entries cancel positive ones ([1, -2] and "
                       "[3] give 2 instead of 6), for p = 3 they subtract, for p = 0.5 they give NaN, and for "
                       "inf a gradient of -7 is ignored.",
        "hint": "Take absolute values first: (sum of g.abs() ** p) ** (1 / p), and g.abs().max() for inf.",
    },
    {
        "slug": "max-of-norms",
        "name": "the largest per-tensor norm taken as the total",
        "impl": max_of_norms,
        "explanation": "The total was the largest of the per-tensor norms. Only the inf-norm works that way "
                       "(the largest |g| overall is the largest of each tensor's largest |g|). For a finite p "
                       "the pieces add up: with [3, 4] and [12] the 2-norm is sqrt(25 + 144) = 13, not "
                       "max(5, 12) = 12, so the total came out too small, clipping started too late and every "
                       "gradient was scaled by max_norm / 12 instead of max_norm / 13.",
        "hint": "Combine the per-tensor norms with the same p-norm (the norm of the stacked norms); only for "
                "inf is that their maximum.",
    },
    {
        "slug": "default-norm-type",
        "name": "norm_type defaults to something other than 2",
        "impl": default_inf_norm,
        "explanation": "Called without norm_type, your function did not measure the 2-norm: the default in the "
                       "signature is not 2.0 (inf, here). torch.nn.utils.clip_grad_norm_ defaults to "
                       "norm_type=2.0, and most callers rely on it: clip_grad_norm_(model.parameters(), 1.0) "
                       "is the usual call, with the Euclidean norm.",
        "hint": "Keep the signature clip_grad_norm_(parameters, max_norm, norm_type=2.0).",
    },
]


def _sum_of_norms_no_clamp(parameters, max_norm, norm_type=2.0):
    grads = _grads(parameters)
    total = torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads]).sum()
    for g in grads:
        g.mul_(max_norm / (total + 1e-6))  # the summed norm, and the factor never capped at 1
    return total


# Pairs of known mistakes made together. These pitfalls are whole functions, not deltas, so a
# pair is written out: a learner who sums the norms and forgets the cap scales every gradient by
# max_norm / sum, which neither pitfall predicts alone (and a diagnosis names a pitfall only
# where its prediction agrees with the learner's numbers).
COMBINATIONS = [
    {"of": ["sum-of-norms", "no-clamp"], "impl": _sum_of_norms_no_clamp},
]
