# expect: failed pitfall=empty-microbatch-nan
# source: a masked_mean helper written (x * mask).sum() / mask.sum() (no clamp), means then weighted by tokens / group tokens
def masked_mean(values, mask):
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum()


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for start in range(0, len(microbatches), k):
        group = microbatches[start:start + k]
        sizes = [float(mb[2].sum()) if len(mb) == 3 else float(len(mb[0])) for mb in group]
        total = sum(sizes)
        optimizer.zero_grad()
        for mb, size in zip(group, sizes):
            losses = loss_fn(model(mb[0]), mb[1])
            mean = masked_mean(losses, mb[2]) if len(mb) == 3 else losses.mean()
            (mean * size / total).backward()
        optimizer.step()
