# expect: failed pitfall=forward-outside
# The loss is computed first and only its backward is put under no_sync: DDP has already
# prepared the all-reduce during the forward, so every microbatch synchronises.
def accumulate_gradients(model, microbatches, loss_fn):
    k = len(microbatches)
    for i, (x, y) in enumerate(microbatches):
        loss = loss_fn(model(x), y) / k
        if i < k - 1:
            with model.no_sync():
                loss.backward()
        else:
            loss.backward()
