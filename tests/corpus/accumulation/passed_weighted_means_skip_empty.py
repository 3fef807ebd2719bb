# expect: passed
# source: per-microbatch means weighted by their share of the group (n_i / N), empty microbatches skipped, groups cut with itertools.islice
from itertools import islice


def _chunks(seq, k):
    it = iter(seq)
    while True:
        chunk = list(islice(it, k))
        if not chunk:
            return
        yield chunk


def _mean_and_count(model, mb, loss_fn):
    out = loss_fn(model(mb[0]), mb[1])
    if len(mb) == 3:
        valid = out[mb[2]]
        return (valid.mean() if valid.numel() else None), valid.numel()
    return out.mean(), out.numel()


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for chunk in _chunks(microbatches, k):
        counts = [int(mb[2].sum()) if len(mb) == 3 else len(mb[0]) for mb in chunk]
        total = sum(counts)
        optimizer.zero_grad()
        for mb, n in zip(chunk, counts):
            if n == 0:
                continue
            mean, _ = _mean_and_count(model, mb, loss_fn)
            (mean * (n / total)).backward()
        optimizer.step()
