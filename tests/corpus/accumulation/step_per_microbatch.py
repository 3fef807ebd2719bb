# expect: failed pitfall=step-every-microbatch
# source: the group denominator computed correctly, but optimizer.step() left inside the microbatch loop
def _n(mb):
    return int(mb[2].sum()) if len(mb) == 3 else len(mb[0])


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for start in range(0, len(microbatches), k):
        group = microbatches[start:start + k]
        total = sum(_n(mb) for mb in group)
        optimizer.zero_grad()
        for mb in group:
            out = loss_fn(model(mb[0]), mb[1])
            out = out[mb[2]] if len(mb) == 3 else out
            (out.sum() / total).backward()
            optimizer.step()
