# expect: failed pitfall=forward-outside
# source: a trainer whose compute_loss() runs the model and whose backward() alone is wrapped in no_sync for accumulation steps
import contextlib


class Trainer:
    def __init__(self, model, loss_fn, accumulation_steps):
        self.model, self.loss_fn, self.accumulation_steps = model, loss_fn, accumulation_steps

    def compute_loss(self, batch):
        inputs, labels = batch
        return self.loss_fn(self.model(inputs), labels) / self.accumulation_steps

    def backward(self, loss, sync):
        ctx = contextlib.nullcontext() if sync else self.model.no_sync()
        with ctx:
            loss.backward()


def accumulate_gradients(model, microbatches, loss_fn):
    trainer = Trainer(model, loss_fn, len(microbatches))
    for step, batch in enumerate(microbatches):
        loss = trainer.compute_loss(batch)
        trainer.backward(loss, sync=step + 1 == len(microbatches))
