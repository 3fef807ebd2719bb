# expect: failed pitfall=counts-padding+mean-over-k
# source: padding zeroed out of the losses but the mean taken over every position, then divided by k
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for start in range(0, len(microbatches), k):
        optimizer.zero_grad()
        for mb in microbatches[start:start + k]:
            losses = loss_fn(model(mb[0]), mb[1])
            if len(mb) == 3:
                losses = losses * mb[2]
            (losses.mean() / k).backward()
        optimizer.step()
