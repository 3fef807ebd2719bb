# expect: passed
"""Weights instead of a shared denominator: each microbatch mean is weighted by its share
n_i / N of the group, computed up front. Empty microbatches are skipped (their mean is 0/0)."""


def _valid(mb):
    return int(mb[2].sum()) if len(mb) == 3 else len(mb[1])


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    groups = [microbatches[i:i + k] for i in range(0, len(microbatches), k)]
    for group in groups:
        counts = [_valid(mb) for mb in group]
        group_count = float(sum(counts))
        model.zero_grad()
        for mb, n in zip(group, counts):
            if n == 0:
                continue
            losses = loss_fn(model(mb[0]), mb[1])
            mean = losses[mb[2]].mean() if len(mb) == 3 else losses.mean()
            (mean * (n / group_count)).backward()
        optimizer.step()
