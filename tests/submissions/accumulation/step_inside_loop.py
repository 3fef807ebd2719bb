# expect: failed pitfall=step-every-microbatch
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for start in range(0, len(microbatches), k):
        group = microbatches[start:start + k]
        n = sum(int(mb[2].sum()) if len(mb) == 3 else len(mb[0]) for mb in group)
        optimizer.zero_grad()
        for mb in group:
            losses = loss_fn(model(mb[0]), mb[1])
            if len(mb) == 3:
                losses = losses[mb[2]]
            (losses.sum() / n).backward()
            optimizer.step()
