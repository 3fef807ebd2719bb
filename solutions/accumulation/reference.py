"""Reference: one epoch of tail-safe gradient accumulation."""


def _loss_sum_and_count(model, microbatch, loss_fn):
    """The microbatch's summed loss and how many things it averages over: examples, or valid
    tokens when a mask is given (padded positions count for nothing)."""
    if len(microbatch) == 3:
        x, y, mask = microbatch
        losses = loss_fn(model(x), y)
        return losses[mask].sum(), int(mask.sum())
    x, y = microbatch
    losses = loss_fn(model(x), y)
    return losses.sum(), losses.numel()


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    microbatches = list(microbatches)
    # Consecutive groups of k; range() stops at the end, so a short final group is kept.
    for start in range(0, len(microbatches), k):
        group = microbatches[start:start + k]
        # The denominator must be known before the first backward, because every microbatch's
        # loss is divided by the same number: the whole group's count. Counting needs only the
        # inputs (mask or first dimension), not a forward pass.
        total = sum(int(mb[2].sum()) if len(mb) == 3 else len(mb[0]) for mb in group)
        optimizer.zero_grad()
        for microbatch in group:
            loss_sum, _ = _loss_sum_and_count(model, microbatch, loss_fn)
            # backward() adds into .grad, so after the loop .grad holds
            # (sum of every loss in the group) / (group count): the gradient of the group mean.
            (loss_sum / total).backward()
        optimizer.step()
