"""Known-wrong ways to scale a rank's token loss under DDP. Each is a whole implementation a
learner could write; the gradients after DDP's average tell them apart (G is the true gradient of
the global token mean, S_r and N_r a rank's loss sum and valid-token count, N = sum of N_r).

Every pitfall is a *delta* (grind_kit.Deltas) of ``_implementation``'s keyword options: what the
numerator sums (the valid tokens' losses, or every position's), what the denominator counts
(all ranks' valid tokens, this rank's, the padded positions), how the count is reduced (SUM or
MAX), the factor for DDP's average (R, 1 or a literal 2), and what a rank without tokens does
(the right clamp, a 0 / 0, or skipping the count's collective). Deltas that set different options
combine: ``combine("local-mean", "empty-rank-nan")`` is ``(losses * mask).sum() / mask.sum()``
unguarded, NaN on an empty rank. (``token_losses[mask].mean()`` is NaN there too, but only in
value: its backward scatters to no position, so its gradient is 0 and it is the plain local mean.)"""

import torch
import torch.distributed as dist

from grind_kit import Deltas


def _implementation(options):
    numerator = options.get("numerator", "valid")  # "valid" | "all" (the padding's losses included)
    count = options.get("count", "global")  # "global" | "local" | "slots" | "positions" | "none"
    op = options.get("op", "sum")  # "sum" | "max": how the count is combined across ranks
    factor = options.get("factor", "world")  # "world" | "one" | "two"
    empty = options.get("empty", "clamp")  # "clamp" | "nan" | "skip" | "global-nan": a rank without tokens
    reduced = options.get("reduced", False)  # the local mean all-reduced (for the log) and returned
    rank0_only = options.get("rank0_only", False)  # only rank 0 joins the count's all_reduce

    def ddp_token_loss(token_losses, mask):
        m = mask.to(token_losses.dtype)
        local_count = m.sum()
        if empty == "skip" and float(local_count) == 0:
            return (token_losses * m).sum()  # "nothing to learn here": no count all_reduce on this rank
        total = (token_losses * m).sum() if numerator == "valid" else token_losses.sum()
        if empty == "nan":
            total = total / local_count * local_count  # through the local mean: 0 / 0 on an empty rank
        if reduced:
            loss = total / local_count.clamp(min=1)
            dist.all_reduce(loss)  # not part of autograd: the gradient stays the local mean's
            return loss / dist.get_world_size()
        if count in ("global", "slots"):
            n = local_count if count == "global" else torch.tensor(float(mask.numel()), dtype=token_losses.dtype)
            n = n.detach().clone()
            if not rank0_only or dist.get_rank() == 0:
                dist.all_reduce(n, op=dist.ReduceOp.MAX if op == "max" else dist.ReduceOp.SUM)
        elif count == "local":
            n = local_count
        elif count == "positions":
            n = torch.tensor(float(mask.numel()), dtype=token_losses.dtype)
        else:
            n = torch.ones((), dtype=token_losses.dtype)
        scale = {"world": dist.get_world_size(), "one": 1, "two": 2}[factor]
        return total * scale / (n if empty == "global-nan" else n.clamp(min=1))

    return ddp_token_loss


MISTAKES = Deltas.on_options(_implementation)
COMBINE = "all"  # pairs run only when a diagnosis needs them
# A collective on rank 0 alone pairs with DDP's gradient all-reduce on the others, and what
# follows (a deadlock, an abort on mismatched sizes, gloo's timeout) depends on sizes and timing,
# not on any other mistake made with it. Paired with anything it is the same hang, and a pair run
# whose timing happened to agree with a learner's named a second mistake the learner did not make.
ALONE = {"count-on-rank0-only"}


def combine(a, b):
    return None if ALONE & {a, b} else MISTAKES.combine(a, b)

PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "local-mean",
        "name": "each rank's own token mean",
        "delta": {"count": "local", "factor": "one"},
        "library": "Megatron-LM's older GPT loss_func (sum over loss_mask.sum() per rank) and the HF Trainer "
                   "with average_tokens_across_devices off",
        "explanation": "Each rank returned the mean over its own valid tokens, and DDP averaged those "
                       "means (older Megatron-LM GPT scripts do this, averaging the loss across ranks only for "
                       "the log; so does the HF Trainer when num_items_in_batch is counted per device). An average of rank means weights a token on a rank with few tokens more "
                       "than one on a rank with many, so the update is not the global token mean unless "
                       "every rank happens to hold the same number of valid tokens.",
        "hint": "The denominator must be the number of valid tokens on all ranks together: all_reduce the "
                "count.",
    },
    {
        "slug": "local-count",
        "name": "divided by the local count",
        "delta": {"count": "local"},
        "explanation": "The factor R is there, but the loss sum was divided by this rank's own token count "
                       "N_r. The result is R times the average of the rank means: right only when the "
                       "counts are equal, and wrong in both scale and weighting otherwise.",
        "hint": "N in R / N is the total count over every rank, not this rank's count.",
    },
    {
        "slug": "missing-world-size",
        "name": "the factor R left out",
        "delta": {"factor": "one"},
        "explanation": "The loss sum was divided by the global count N but not multiplied by R. DDP "
                       "averages gradients, that is it sums them and divides by R, so every gradient came "
                       "out R times too small.",
        "hint": "DDP divides the summed gradients by the world size: multiply by it to cancel that.",
    },
    {
        "slug": "reduced-loss",
        "name": "the loss all-reduced instead of the count",
        "delta": {"reduced": True},
        "explanation": "The local mean loss was all-reduced and divided by R. That makes the printed loss "
                       "look global, but all_reduce is not part of autograd: the gradient is still each "
                       "rank's local mean, divided by R once here and once more by DDP.",
        "hint": "What has to be shared across ranks is the token count (a number without gradient); the "
                "loss sum stays local and DDP combines its gradient.",
    },
    {
        "slug": "padded-count",
        "name": "padding counted as tokens",
        "delta": {"count": "slots"},
        "explanation": "The denominator counted every position of the padded batch, not the valid tokens. "
                       "Padding contributes no loss, so the gradient is shrunk by the share of padding, "
                       "which changes from batch to batch.",
        "hint": "Count the valid tokens: the sum of the mask.",
    },
    {
        "slug": "hard-coded-world-size",
        "name": "the world size written as 2",
        "delta": {"factor": "two"},
        "explanation": "The factor R was written as the number 2. That is right on two ranks only; with "
                       "four ranks every gradient comes out half as large as it should.",
        "hint": "Ask the process group: torch.distributed.get_world_size().",
    },
    {
        "slug": "count-max",
        "name": "the token count reduced with MAX instead of SUM",
        "delta": {"op": "max"},
        "explanation": "The valid-token count was all-reduced with ReduceOp.MAX, so N became the largest "
                       "rank's count instead of the total over the ranks. The gradient comes out too large by "
                       "N / max(N_r), and the factor changes with how the tokens happen to be spread. Every "
                       "rank contributes its own tokens: the total is their sum.",
        "hint": "The global token count is a sum: dist.all_reduce(count, op=ReduceOp.SUM).",
    },
    {
        "slug": "empty-rank-nan",
        "name": "0 / 0 on a rank without tokens (NaN everywhere)",
        "delta": {"empty": "nan"},
        "explanation": "The loss went through this rank's own mean, S_r / N_r (for instance "
                       "(losses * mask).sum() / mask.sum(), then rescaled by N_r * R / N). On a rank whose batch "
                       "is all padding N_r = 0, the mean is 0 / 0 = NaN, its gradient is NaN, and DDP's all-reduce spreads "
                       "the NaN to every rank: one all-padding batch ruins the whole model. A rank without "
                       "tokens must contribute a zero loss, not an undefined one.",
        "hint": "Never divide by this rank's own count: backpropagate S_r * R / N, with N the global count "
                "(clamped at 1 for the case where no rank has a token).",
    },
    {
        "slug": "empty-rank-skips-collective",
        "name": "a rank without tokens skips the count's all_reduce",
        "delta": {"empty": "skip"},
        "explanation": "A rank whose batch was all padding returned a zero loss at once, without joining the "
                       "all_reduce of the token count. The other ranks wait in that all_reduce while this one "
                       "is already in backward, waiting in DDP's gradient all-reduce: each waits for a "
                       "collective the other never enters, and a real job hangs. Every rank joins every "
                       "collective, tokens or not; an empty rank contributes a count of 0.",
        "hint": "Do the count's all_reduce on every rank before anything else, even when this rank's count is 0.",
    },
    {
        "slug": "no-tokens-anywhere-nan",
        "name": "0 / 0 when no rank has a token",
        "delta": {"empty": "global-nan"},
        "explanation": "The global count N was used as it came out of the all_reduce. When every rank's batch "
                       "is all padding (rare, but it happens with short final batches or aggressive "
                       "filtering) N = 0 and the loss is 0 / 0 = NaN on every rank, and so is every gradient: "
                       "a single such step corrupts the weights. Clamping N at 1 makes the loss 0 there, which "
                       "is what a step without any token should contribute.",
        "hint": "Divide by count.clamp(min=1): with no token anywhere the sum is 0, and so is the loss.",
    },
    {
        "slug": "count-on-rank0-only",
        "name": "the count's all_reduce called on rank 0 only",
        "delta": {"rank0_only": True},
        "explanation": "The all_reduce of the token count sat under `if rank == 0`, as if it were logging. A "
                       "collective must be called by every rank: gloo and NCCL pair collectives by their order, "
                       "so rank 0's all_reduce meets the other ranks' first gradient all-reduce from DDP's "
                       "backward instead. Depending on the sizes, rank 0 is left waiting (a deadlock: the job "
                       "hangs) or the mismatched buffers abort the process.",
        "hint": "Call dist.all_reduce on every rank, with no condition on the rank.",
    },
    {
        "slug": "unmasked-mean",
        "name": "the mean over every position, padding included",
        "delta": {"numerator": "all", "count": "positions", "factor": "one"},
        "explanation": "The loss was token_losses.mean(): the mask was never applied, so the losses computed "
                       "at padding positions (which are not zero: the model still predicts something there) "
                       "joined the sum, and the denominator counted every position. The gradient follows the "
                       "padding as much as the text.",
        "hint": "Multiply by the mask before summing, and count only the valid tokens.",
    },
    {
        "slug": "sum-not-normalised",
        "name": "the sum of the token losses, never divided",
        "delta": {"count": "none", "factor": "one"},
        "explanation": "The loss was the plain sum over this rank's valid tokens (reduction='sum' with no "
                       "normalisation afterwards). After DDP's average the gradient is (sum over all tokens) / R "
                       "instead of the mean over all tokens: its scale grows with the number of tokens in the "
                       "batch, so the effective learning rate changes with every batch's length.",
        "hint": "Divide by the global token count N (and multiply by R for DDP's average).",
    },
])
