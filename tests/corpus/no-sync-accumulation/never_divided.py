# expect: failed pitfall=no-one-over-k
# source: accumulation loop with the usual no_sync handling whose loss was meant to be normalised "in the optimizer", which never happens
from contextlib import nullcontext


def accumulate_gradients(model, microbatches, loss_fn):
    for idx, (x, target) in enumerate(microbatches):
        final = idx == len(microbatches) - 1
        with nullcontext() if final else model.no_sync():
            loss = loss_fn(model(x), target)
            loss.backward()
