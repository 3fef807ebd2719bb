# expect: failed pitfall=no-sync-everywhere
# source: "no_sync around the accumulation" read as one context around the whole loop, the last microbatch included: DDP never synchronises
def accumulate_gradients(model, microbatches, loss_fn):
    n = len(microbatches)
    with model.no_sync():
        for x, y in microbatches:
            (loss_fn(model(x), y) * (1.0 / n)).backward()
