"""Known-wrong variants of train_epoch. Each one is a whole implementation a learner could
plausibly write; they share one loop and differ in the single detail each gets wrong."""


def _loss_sum_and_count(model, microbatch, loss_fn, padding="skip"):
    """The summed loss and its count. padding="skip" is right; "count" sums the valid losses
    but counts every slot; "include" ignores the mask altogether."""
    x, y = microbatch[0], microbatch[1]
    losses = loss_fn(model(x), y)
    if len(microbatch) == 3 and padding != "include":
        mask = microbatch[2]
        count = losses.numel() if padding == "count" else int(mask.sum())
        return losses[mask].sum(), count
    return losses.sum(), losses.numel()


def _count(microbatch, padding="skip"):
    if len(microbatch) == 3 and padding == "skip":
        return int(microbatch[2].sum())
    return microbatch[1].numel() if len(microbatch) == 3 else len(microbatch[0])


def _epoch(model, microbatches, optimizer, k, loss_fn, *, scale, padding="skip", step_each=False,
           zero_each=False, zero_between_groups=True, drop_tail=False):
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
            loss_sum, count = _loss_sum_and_count(model, microbatch, loss_fn, padding)
            scale(loss_sum, count, total, len(group), k).backward()
            if step_each:
                optimizer.step()
        if not step_each:
            optimizer.step()


def _right(loss_sum, count, total, group_len, k):
    return loss_sum / total


def sum_of_means(model, microbatches, optimizer, k, loss_fn):
    _epoch(model, microbatches, optimizer, k, loss_fn,
           scale=lambda s, n, total, g, k: s / n)  # each microbatch's mean, never divided by k


def raw_sum(model, microbatches, optimizer, k, loss_fn):
    _epoch(model, microbatches, optimizer, k, loss_fn,
           scale=lambda s, n, total, g, k: s)  # reduction="sum" and nothing else


def mean_over_k(model, microbatches, optimizer, k, loss_fn):
    _epoch(model, microbatches, optimizer, k, loss_fn,
           scale=lambda s, n, total, g, k: s / n / k)  # the textbook loss / accum_steps


def average_of_means(model, microbatches, optimizer, k, loss_fn):
    _epoch(model, microbatches, optimizer, k, loss_fn,
           scale=lambda s, n, total, g, k: s / n / g)  # divides by the group's real length


def textbook_loop(model, microbatches, optimizer, k, loss_fn):
    # loss.mean() / k, and step only when (i + 1) % k == 0: both mistakes at once
    _epoch(model, microbatches, optimizer, k, loss_fn,
           scale=lambda s, n, total, g, k: s / n / k, drop_tail=True)


def drop_tail(model, microbatches, optimizer, k, loss_fn):
    _epoch(model, microbatches, optimizer, k, loss_fn, scale=_right, drop_tail=True)


def step_every_microbatch(model, microbatches, optimizer, k, loss_fn):
    _epoch(model, microbatches, optimizer, k, loss_fn, scale=_right, step_each=True)


def zero_every_microbatch(model, microbatches, optimizer, k, loss_fn):
    _epoch(model, microbatches, optimizer, k, loss_fn, scale=_right, zero_each=True)


def never_zero(model, microbatches, optimizer, k, loss_fn):
    _epoch(model, microbatches, optimizer, k, loss_fn, scale=_right, zero_between_groups=False)


def counts_padding(model, microbatches, optimizer, k, loss_fn):
    _epoch(model, microbatches, optimizer, k, loss_fn, scale=_right, padding="count")


def ignores_mask(model, microbatches, optimizer, k, loss_fn):
    _epoch(model, microbatches, optimizer, k, loss_fn, scale=_right, padding="include")


PITFALLS = [
    {
        "slug": "sum-of-means",
        "name": "no 1/k: summing the microbatch means",
        "impl": sum_of_means,
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
        "impl": raw_sum,
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
        "impl": mean_over_k,
        "explanation": "loss.mean() / k is right only when every group holds exactly k microbatches of "
                       "the same size. The final group of an epoch is usually shorter, so its update "
                       "came out too small (one microbatch of 3 with k = 2 got half its gradient), and "
                       "inside a group a small microbatch's examples weighed more than a large one's.",
        "hint": "Use the group's real size: divide each microbatch's loss sum by the total count of the "
                "microbatches actually in the group.",
    },
    {
        "slug": "average-of-means",
        "name": "averaging the microbatch means equally",
        "impl": average_of_means,
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
        "impl": drop_tail,
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
        "impl": textbook_loop,
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
        "impl": step_every_microbatch,
        "explanation": "optimizer.step() ran after every backward() instead of once per group, so "
                       "there were k updates per group, each using the part of the group's gradient "
                       "accumulated so far. Accumulation exists to make one update from several "
                       "microbatches.",
        "hint": "Move optimizer.step() out of the loop over the group's microbatches: one step per group.",
    },
    {
        "slug": "zero-every-microbatch",
        "name": "zeroing the gradients before every microbatch",
        "impl": zero_every_microbatch,
        "explanation": "optimizer.zero_grad() ran before each backward(), which throws away what the "
                       "earlier microbatches of the group contributed. The single step per group only "
                       "saw the last microbatch's share of the gradient.",
        "hint": "Zero once per group, before its first backward() (or right after its step()), never "
                "between microbatches of the same group.",
    },
    {
        "slug": "never-zero",
        "name": "never zeroing between groups",
        "impl": never_zero,
        "explanation": "The gradients were not reset after a step, so each group's update also contained "
                       "every earlier group's gradient. backward() always adds into .grad; only "
                       "zero_grad() starts a fresh sum.",
        "hint": "Call optimizer.zero_grad() at the start of every group (or after every step()).",
    },
    {
        "slug": "counts-padding",
        "name": "counting padded positions in the denominator",
        "impl": counts_padding,
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
        "impl": ignores_mask,
        "explanation": "Padded positions were treated as real tokens: their losses were summed and they "
                       "were counted. The model was trained to predict whatever sits in the padding. "
                       "Only positions where the mask is True belong to the loss.",
        "hint": "Select the valid positions (losses[mask]) before summing, and count mask.sum() of them.",
    },
]
