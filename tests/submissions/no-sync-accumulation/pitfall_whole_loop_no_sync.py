# expect: failed pitfall=no-sync-everywhere
# The whole loop inside one no_sync block: nothing is ever all-reduced and each rank keeps its own.
def accumulate_gradients(model, microbatches, loss_fn):
    with model.no_sync():
        for x, y in microbatches:
            (loss_fn(model(x), y) / len(microbatches)).backward()
