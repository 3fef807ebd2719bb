# expect: passed
# One no_sync block around the first k - 1 microbatches, then the last on its own; returns the
# mean loss for logging.
def accumulate_gradients(model, microbatches, loss_fn):
    k = len(microbatches)
    total = 0.0

    def one(x, y):
        loss = loss_fn(model(x), y).div(k)
        loss.backward()
        return loss.item()

    with model.no_sync():
        for x, y in microbatches[:-1]:
            total += one(x, y)
    total += one(*microbatches[-1])
    return total
