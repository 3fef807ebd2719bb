# expect: passed
# source: look-alike of a trainer with an accelerate-like accumulate() helper: a step counter decides sync_gradients, and the helper enters no_sync around the whole forward/backward when it is False
import contextlib


class Accumulator:
    def __init__(self, steps):
        self.steps = steps
        self.count = 0
        self.sync_gradients = True

    @contextlib.contextmanager
    def accumulate(self, model):
        self.count += 1
        self.sync_gradients = self.count % self.steps == 0
        with contextlib.nullcontext() if self.sync_gradients else model.no_sync():
            yield

    def backward(self, loss):
        (loss / self.steps).backward()


def accumulate_gradients(model, microbatches, loss_fn):
    acc = Accumulator(len(microbatches))
    for inputs, targets in microbatches:
        with acc.accumulate(model):
            outputs = model(inputs)
            acc.backward(loss_fn(outputs, targets))
