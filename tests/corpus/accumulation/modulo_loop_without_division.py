# expect: failed pitfall=drop-tail+sum-of-means
# source: the (i + 1) % k loop with the division by k forgotten
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    optimizer.zero_grad()
    for i, mb in enumerate(microbatches):
        losses = loss_fn(model(mb[0]), mb[1])
        if len(mb) == 3:
            losses = losses[mb[2]]
        losses.mean().backward()
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()
