# expect: failed pitfall=zero-every-microbatch
# source: the usual zero_grad / backward pair kept together inside the microbatch loop
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for start in range(0, len(microbatches), k):
        group = microbatches[start:start + k]
        total = sum(mb[2].sum().item() if len(mb) == 3 else mb[0].shape[0] for mb in group)
        for mb in group:
            optimizer.zero_grad()
            losses = loss_fn(model(mb[0]), mb[1])
            if len(mb) == 3:
                losses = losses[mb[2]]
            (losses.sum() / total).backward()
        optimizer.step()
