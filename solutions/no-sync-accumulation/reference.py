"""Reference: k microbatches accumulated under DDP with one gradient all-reduce."""

import contextlib


def accumulate_gradients(model, microbatches, loss_fn):
    k = len(microbatches)
    for i, (inputs, targets) in enumerate(microbatches):
        last = i == k - 1
        # DDP decides during the forward whether the coming backward all-reduces, so the forward
        # must be inside no_sync as well as the backward. The last microbatch runs outside it: its
        # backward all-reduces what .grad holds by then, the sum over all k microbatches.
        with contextlib.nullcontext() if last else model.no_sync():
            # loss_fn is a mean over one microbatch; / k makes the k of them one mean. DDP's own
            # average over the R ranks supplies the other factor, 1 / R: nothing to add for it.
            loss = loss_fn(model(inputs), targets) / k
            loss.backward()  # adds into .grad; nothing here may zero it between microbatches
