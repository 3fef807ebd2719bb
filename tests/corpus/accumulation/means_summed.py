# expect: failed pitfall=sum-of-means
# source: accumulation by backward() alone: each microbatch's mean loss backpropagated as it is
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for start in range(0, len(microbatches), k):
        optimizer.zero_grad()
        for x, y, *rest in microbatches[start:start + k]:
            losses = loss_fn(model(x), y)
            if rest:
                losses = losses[rest[0]]
            losses.mean().backward()
        optimizer.step()
