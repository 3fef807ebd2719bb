# expect: failed pitfall=empty-microbatch-nan
"""Right weights (mean * n / N), but the masked mean is written as (losses * mask).sum() / mask.sum().
For a microbatch that is all padding that is 0 / 0: backward sends inf * 0 = NaN into every
gradient, so only the case with an empty microbatch fails."""


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for s in range(0, len(microbatches), k):
        group = microbatches[s:s + k]
        counts = [mb[2].sum() if len(mb) == 3 else len(mb[0]) for mb in group]
        N = sum(counts)
        optimizer.zero_grad()
        for mb, n in zip(group, counts):
            losses = loss_fn(model(mb[0]), mb[1])
            if len(mb) == 3:
                mean = (losses * mb[2]).sum() / mb[2].sum()
            else:
                mean = losses.mean()
            (mean * n / N).backward()
        optimizer.step()
