# expect: passed
# source: look-alike of a Lightning-like strategy: a _block_backward_sync helper yields no_sync for DDP models, and the training step (forward and backward) runs inside it unless the batch closes the accumulation window
from contextlib import contextmanager, nullcontext

from torch.nn.parallel import DistributedDataParallel


@contextmanager
def _block_backward_sync(module, should_block):
    if should_block and isinstance(module, DistributedDataParallel):
        with module.no_sync():
            yield
    else:
        yield


def _training_step(module, batch, loss_fn, accumulate_grad_batches):
    inputs, targets = batch
    loss = loss_fn(module(inputs), targets) / accumulate_grad_batches
    loss.backward()
    return loss.detach()


def accumulate_gradients(model, microbatches, loss_fn):
    window = len(microbatches)
    for batch_idx, batch in enumerate(microbatches):
        is_last = (batch_idx + 1) % window == 0
        with _block_backward_sync(model, should_block=not is_last):
            _training_step(model, batch, loss_fn, window)
