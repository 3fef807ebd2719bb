# expect: failed pitfall=no-one-over-k
# Right synchronisation, but the microbatch means are summed, not averaged.
import contextlib


def accumulate_gradients(model, microbatches, loss_fn):
    last = len(microbatches) - 1
    for i, (x, y) in enumerate(microbatches):
        with (model.no_sync() if i != last else contextlib.nullcontext()):
            loss_fn(model(x), y).backward()
