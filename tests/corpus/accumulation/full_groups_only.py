# expect: failed pitfall=drop-tail
# source: right denominators, but the number of groups computed with floor division
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    def count(mb):
        return int(mb[2].sum()) if len(mb) == 3 else len(mb[0])

    def loss_sum(mb):
        out = loss_fn(model(mb[0]), mb[1])
        return out[mb[2]].sum() if len(mb) == 3 else out.sum()

    for g in range(len(microbatches) // k):
        group = microbatches[g * k:(g + 1) * k]
        n = sum(count(mb) for mb in group)
        optimizer.zero_grad()
        for mb in group:
            (loss_sum(mb) / n).backward()
        optimizer.step()
