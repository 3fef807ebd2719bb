"""Reference: one epoch of tail-safe gradient accumulation."""


def _count(microbatch):
    """How many things the loss averages over: valid tokens when there is a mask (padded
    positions count for nothing), otherwise examples (the first dimension of x)."""
    if len(microbatch) == 3:
        return int(microbatch[2].sum())
    return len(microbatch[0])


def _loss_sum(model, microbatch, loss_fn):
    if len(microbatch) == 3:
        x, y, mask = microbatch
        return loss_fn(model(x), y)[mask].sum()  # boolean indexing drops the padded positions
    x, y = microbatch
    return loss_fn(model(x), y).sum()


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    microbatches = list(microbatches)
    # Consecutive groups of k. range() runs past the last full group, so a short final group
    # is kept and flushed like any other, with its own (smaller) denominator.
    for start in range(0, len(microbatches), k):
        group = microbatches[start:start + k]
        # Every microbatch's loss is divided by the same number, the whole group's count, so it
        # must be known before the first backward. Counting needs only the inputs.
        total = sum(_count(mb) for mb in group)
        optimizer.zero_grad()  # nothing from the previous group may leak into this one
        for microbatch in group:
            # backward() adds into .grad, so after the loop .grad holds
            # (sum of every loss in the group) / total: the gradient of the group's mean loss.
            (_loss_sum(model, microbatch, loss_fn) / total).backward()
        optimizer.step()  # exactly one update per group
