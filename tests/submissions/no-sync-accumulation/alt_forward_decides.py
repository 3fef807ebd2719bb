# expect: passed
# Only the forward sits inside no_sync, the backward always outside: DDP fixes at forward time
# whether the backward synchronises, so this all-reduces once too.
import contextlib


def accumulate_gradients(model, microbatches, loss_fn):
    n = len(microbatches)
    for step, (x, y) in enumerate(microbatches, start=1):
        context = contextlib.nullcontext() if step == n else model.no_sync()
        with context:
            prediction = model(x)
        loss = loss_fn(prediction, y) * (1.0 / n)
        loss.backward()
