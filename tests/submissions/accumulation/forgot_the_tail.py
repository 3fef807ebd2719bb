# expect: failed pitfall=drop-tail
def count(mb):
    return mb[2].sum().item() if len(mb) == 3 else mb[0].shape[0]


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for g in range(len(microbatches) // k):
        group = microbatches[g * k:(g + 1) * k]
        n = sum(count(mb) for mb in group)
        optimizer.zero_grad()
        for mb in group:
            losses = loss_fn(model(mb[0]), mb[1])
            s = (losses * mb[2]).sum() if len(mb) == 3 else losses.sum()
            (s / n).backward()
        optimizer.step()
