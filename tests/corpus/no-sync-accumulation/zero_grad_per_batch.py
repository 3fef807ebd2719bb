# expect: failed pitfall=zero-grad-each-microbatch
# source: a plain training loop turned into accumulation by adding no_sync, with its per-batch zero_grad(set_to_none=True) kept at the top of the loop
import contextlib


def accumulate_gradients(model, microbatches, loss_fn):
    steps = len(microbatches)
    for i, (inputs, targets) in enumerate(microbatches):
        model.zero_grad(set_to_none=True)
        ctx = model.no_sync() if i < steps - 1 else contextlib.nullcontext()
        with ctx:
            out = model(inputs)
            (loss_fn(out, targets) / steps).backward()
