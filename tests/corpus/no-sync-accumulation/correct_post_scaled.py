# expect: passed
# source: independent answer: microbatch losses backpropagated unscaled under no_sync except the last, and the accumulated, already averaged gradients divided by k at the end
import contextlib


def accumulate_gradients(model, microbatches, loss_fn):
    k = len(microbatches)
    for index, (x, y) in enumerate(microbatches):
        ctx = model.no_sync() if index + 1 < k else contextlib.nullcontext()
        with ctx:
            loss_fn(model(x), y).backward()
    for p in model.parameters():
        if p.grad is not None:
            p.grad.div_(k)
