# expect: failed pitfall=never-zero
# source: zero_grad called once before the epoch, never between groups
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    optimizer.zero_grad()
    i = 0
    while i < len(microbatches):
        group = microbatches[i:i + k]
        n = sum(int(mb[2].sum()) if len(mb) == 3 else len(mb[0]) for mb in group)
        for mb in group:
            losses = loss_fn(model(mb[0]), mb[1])
            (losses[mb[2]].sum() / n if len(mb) == 3 else losses.sum() / n).backward()
        optimizer.step()
        i += k
