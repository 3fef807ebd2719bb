"""Known-wrong variants of train_epoch. Each one is a whole implementation a learner could
plausibly write; they share one loop and differ in the details each gets wrong.

Every pitfall is a *delta* (grind_kit.Deltas): a dict of options of the shared loop ``_epoch``
(its ``"delta"`` key). Deltas that set different options compose into one implementation making both mistakes:
``combine("mean-over-k", "empty-microbatch-nan")`` is nanoGPT's ``loss / accumulation_steps``
with the masked mean written as ``(losses * mask).sum() / mask.sum()``; ``combine`` returns None
when both set the same option. Pitfalls that are a real library's own convention carry
``"library"`` and ``"convention": True``."""

from grind_kit import Deltas


def _count(microbatch, padding="skip"):
    """What one microbatch counts for in the denominator. padding="skip" is right (valid tokens);
    "count" counts every slot of the padded tensor; "include" ignores the mask altogether (every
    slot is a token); "sequences" counts the sequences, not their tokens."""
    if len(microbatch) != 3:
        return len(microbatch[0])
    if padding == "skip":
        return int(microbatch[2].sum())
    if padding == "sequences":
        return len(microbatch[0])
    return microbatch[1].numel()


def _loss_sum_and_count(model, microbatch, loss_fn, padding="skip", masked_mean="index"):
    """The summed loss and its count. masked_mean="multiply" computes the valid losses' sum as the
    masked mean (losses * mask).sum() / mask.sum() times the count, which is 0 / 0 = NaN (and NaN
    gradients) for a microbatch that is all padding; selecting losses[mask] is safe."""
    x, y = microbatch[0], microbatch[1]
    losses = loss_fn(model(x), y)
    count = _count(microbatch, padding)
    if len(microbatch) == 3 and padding != "include":
        mask = microbatch[2]
        if masked_mean == "multiply":
            return (losses * mask).sum() / mask.sum() * count, count
        return losses[mask].sum(), count
    return losses.sum(), count


SCALES = {
    # what is backpropagated for one microbatch: s its loss sum, n its count, total the group's
    # count, g the group's real length
    "group_count": lambda s, n, total, g, k: s / total,  # right
    "mean": lambda s, n, total, g, k: s / n,  # each microbatch's mean, never divided by k
    "sum": lambda s, n, total, g, k: s,  # reduction="sum" and nothing else
    "mean/k": lambda s, n, total, g, k: s / n / k,  # the textbook loss / accumulation_steps
    "mean/len": lambda s, n, total, g, k: s / n / g,  # divides by the group's real length
}


def _epoch(model, microbatches, optimizer, k, loss_fn, *, scale="group_count", padding="skip",
           masked_mean="index", step_each=False, zero_each=False, zero_between_groups=True, drop_tail=False):
    microbatches = list(microbatches)
    for start in range(0, len(microbatches), k):
        group = microbatches[start:start + k]
        if drop_tail and len(group) < k:
            break
        total = sum(_count(mb, padding) for mb in group)
        if zero_between_groups:
            optimizer.zero_grad()
        for microbatch in group:
            if zero_each:
                optimizer.zero_grad()
            loss_sum, count = _loss_sum_and_count(model, microbatch, loss_fn, padding, masked_mean)
            SCALES[scale](loss_sum, count, total, len(group), k).backward()
            if step_each:
                optimizer.step()
        if not step_each:
            optimizer.step()


def _implementation(options):
    def train_epoch(model, microbatches, optimizer, k, loss_fn):
        _epoch(model, microbatches, optimizer, k, loss_fn, **options)
    return train_epoch


MISTAKES = Deltas.on_options(_implementation)


# The pairs grind runs together to name a submission that makes two mistakes at once. Each
# subject here costs about a second of trusted time, so rather than every pair (combine() can
# build 64), the ones real loops make: nanoGPT's masked mean, tutorial loops without the mask or
# the division, and the NaN of an empty microbatch next to each way of averaging.
COMBINE = [
    ("mean-over-k", "empty-microbatch-nan"),
    ("mean-over-k", "counts-padding"),
    ("mean-over-k", "ignores-mask"),
    ("mean-over-k", "counts-sequences"),
    ("mean-over-k", "step-every-microbatch"),
    ("mean-over-k", "never-zero"),
    ("textbook-loop", "empty-microbatch-nan"),
    ("textbook-loop", "counts-padding"),
    ("textbook-loop", "ignores-mask"),
    ("sum-of-means", "drop-tail"),
    ("sum-of-means", "empty-microbatch-nan"),
    ("sum-of-means", "never-zero"),
    ("average-of-means", "empty-microbatch-nan"),
    ("raw-sum", "drop-tail"),
    ("drop-tail", "counts-padding"),
    ("drop-tail", "empty-microbatch-nan"),
]

# train_epoch making every listed mistake at once, or None when two of them set the same option
# (then they are alternatives, not a combination).
combine = MISTAKES.combine


PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "sum-of-means",
        "name": "no 1/k: summing the microbatch means",
        "delta": {"scale": "mean"},
        "explanation": "Each microbatch's mean loss went into backward() as it was. Gradients add up "
                       "in .grad, so a group of k microbatches produced the sum of k mean gradients, "
                       "about k times the gradient of the group mean: the run behaves as if the "
                       "learning rate were k times larger.",
        "hint": "Every example in a group should carry weight 1 / (examples in the group): divide each "
                "microbatch's loss sum by the group's total count.",
    },
    {
        "slug": "raw-sum",
        "name": "loss sums never divided",
        "delta": {"scale": "sum"},
        "explanation": "The summed losses were backpropagated without any division, so each update "
                       "was the gradient of the group's total loss, which grows with the number of "
                       "examples in the group instead of being an average. Summing is the right first "
                       "half; dividing by the group's count is the other half.",
        "hint": "Divide each microbatch's loss sum by the number of examples (or valid tokens) in its "
                "whole group before calling backward().",
    },
    {
        "slug": "mean-over-k",
        "name": "dividing each microbatch mean by k",
        "delta": {"scale": "mean/k"},
        "library": "nanoGPT (loss / gradient_accumulation_steps), HF accelerate and PyTorch Lightning "
                   "(backward divides by the accumulation steps), HF Trainer before v4.46",
        "convention": True,
        "explanation": "Each microbatch's mean loss was divided by k: the convention of nanoGPT, of HF "
                       "accelerate's and PyTorch Lightning's accumulation, and of the HF Trainer before v4.46. It "
                       "is right only when every group holds exactly k microbatches of the same size (or the same "
                       "number of tokens). The final group of an epoch is usually shorter, so its update came out "
                       "too small (one microbatch of 3 with k = 2 got half its gradient), and inside a group a "
                       "small microbatch's examples weighed more than a large one's. This exercise asks for the "
                       "group's mean: every loss in the group divided by the group's total count (what the HF "
                       "Trainer does since v4.46 with num_items_in_batch, and fairseq always did).",
        "hint": "Use the group's real size: divide each microbatch's loss sum by the total count of the "
                "microbatches actually in the group.",
    },
    {
        "slug": "average-of-means",
        "name": "averaging the microbatch means equally",
        "delta": {"scale": "mean/len"},
        "explanation": "The group's update was the plain average of its microbatch means. That handles "
                       "a short final group, but it gives every microbatch the same weight whatever its "
                       "size, so with microbatches of 8, 8 and 3 each of the 3 small ones counts 1/9 "
                       "instead of 1/19. Averages of averages are not the average.",
        "hint": "Weight by counts, not by microbatches: sum the losses over the group and divide by the "
                "number of examples (or valid tokens) in it.",
    },
    {
        "slug": "drop-tail",
        "name": "dropping the final partial group",
        "delta": {"drop_tail": True},
        "explanation": "The last group had fewer than k microbatches and never produced an update: its "
                       "examples were computed (or skipped) but never learned from. Every microbatch "
                       "belongs to exactly one update, and a short final group is flushed with its "
                       "own, smaller denominator.",
        "hint": "After the loop, or by looping over groups rather than counting to k, make sure a "
                "leftover group still gets its optimizer.step().",
    },
    {
        "slug": "textbook-loop",
        "name": "the textbook loop: loss.mean() / k and a step every k-th microbatch",
        "delta": {"scale": "mean/k", "drop_tail": True},
        "explanation": "This is the loop found in most tutorials: each microbatch's mean divided by k, "
                       "and a step when (i + 1) % k == 0. It has two separate problems. The short "
                       "final group never reaches the step, so its examples are lost, and dividing "
                       "means by k weighs the examples of a small microbatch more than those of a big "
                       "one in the same group. It is exact only for equal microbatches and a "
                       "number of them divisible by k.",
        "hint": "Step after the last microbatch too (i + 1 == len(microbatches)), and divide each "
                "microbatch's loss sum by its group's total count instead of its mean by k.",
    },
    {
        "slug": "step-every-microbatch",
        "name": "stepping after every microbatch",
        "delta": {"step_each": True},
        "explanation": "optimizer.step() ran after every backward() instead of once per group, so "
                       "there were k updates per group, each using the part of the group's gradient "
                       "accumulated so far. Accumulation exists to make one update from several "
                       "microbatches.",
        "hint": "Move optimizer.step() out of the loop over the group's microbatches: one step per group.",
    },
    {
        "slug": "zero-every-microbatch",
        "name": "zeroing the gradients before every microbatch",
        "delta": {"zero_each": True},
        "explanation": "optimizer.zero_grad() ran before each backward(), which throws away what the "
                       "earlier microbatches of the group contributed. The single step per group only "
                       "saw the last microbatch's share of the gradient.",
        "hint": "Zero once per group, before its first backward() (or right after its step()), never "
                "between microbatches of the same group.",
    },
    {
        "slug": "never-zero",
        "name": "never zeroing between groups",
        "delta": {"zero_between_groups": False},
        "explanation": "The gradients were not reset after a step, so each group's update also contained "
                       "every earlier group's gradient. backward() always adds into .grad; only "
                       "zero_grad() starts a fresh sum.",
        "hint": "Call optimizer.zero_grad() at the start of every group (or after every step()).",
    },
    {
        "slug": "counts-padding",
        "name": "counting padded positions in the denominator",
        "delta": {"padding": "count"},
        "explanation": "The masked losses were summed correctly, but the denominator counted every slot "
                       "of the padded tensors, padding included. The gradient then shrinks with the "
                       "amount of padding, which changes from batch to batch. The count must be the "
                       "number of valid tokens, mask.sum().",
        "hint": "For masked microbatches, add up mask.sum() over the group, not mask.numel() or "
                "batch * length.",
    },
    {
        "slug": "ignores-mask",
        "name": "ignoring the mask",
        "delta": {"padding": "include"},
        "explanation": "Padded positions were treated as real tokens: their losses were summed and they "
                       "were counted. The model was trained to predict whatever sits in the padding. "
                       "Only positions where the mask is True belong to the loss.",
        "hint": "Select the valid positions (losses[mask]) before summing, and count mask.sum() of them.",
    },
    {
        "slug": "counts-sequences",
        "name": "counting sequences instead of tokens",
        "delta": {"padding": "sequences"},
        "library": "fairseq with --sentence-avg",
        "convention": True,
        "explanation": "The masked losses were summed over the valid tokens, but the denominator counted "
                       "sequences, not tokens: fairseq's --sentence-avg convention (its sample_size is then the "
                       "number of sentences). Every sequence then weighs its token count, so the gradient grows "
                       "with sequence length. This exercise averages over tokens: a group's count is the sum of "
                       "mask.sum() over its microbatches (two sequences with 3 and 1 valid tokens hold 4 tokens, "
                       "not 2 sequences).",
        "hint": "For masked microbatches count mask.sum(), the valid tokens, not len(x).",
    },
    {
        "slug": "empty-microbatch-nan",
        "name": "NaN from a microbatch that is all padding",
        "delta": {"masked_mean": "multiply"},
        "explanation": "The masked mean was written (losses * mask).sum() / mask.sum(). For a microbatch with "
                       "no valid token that is 0 / 0 = NaN, and its backward sends NaN into every gradient (the "
                       "mask multiplies the losses, so even the padded positions get 0 * inf), which then spreads "
                       "to every later update. An empty microbatch must contribute nothing: select the valid "
                       "losses, losses[mask].sum(), skip it, or divide by mask.sum().clamp(min=1).",
        "hint": "Sum losses[mask] (an empty selection sums to 0 with a zero gradient) and divide by the "
                "group's count, which is never 0.",
    },
])
