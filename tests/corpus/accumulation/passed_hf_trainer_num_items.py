# expect: passed
# source: look-alike of the HF Trainer since v4.46: get_batch_samples() counts num_items_in_batch over the whole accumulation window first, then each loss is sum / num_items_in_batch
import math


def get_batch_samples(iterator, num_batches):
    batch_samples = []
    for _ in range(num_batches):
        try:
            batch_samples.append(next(iterator))
        except StopIteration:
            break
    num_items_in_batch = sum(int(b[2].sum()) if len(b) == 3 else len(b[1]) for b in batch_samples)
    return batch_samples, num_items_in_batch


def compute_loss(model, inputs, loss_fn, num_items_in_batch):
    per_item = loss_fn(model(inputs[0]), inputs[1])
    if len(inputs) == 3:
        per_item = per_item[inputs[2]]
    return per_item.sum() / num_items_in_batch


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    epoch_iterator = iter(microbatches)
    for _ in range(math.ceil(len(microbatches) / k)):
        batch_samples, num_items_in_batch = get_batch_samples(epoch_iterator, k)
        for inputs in batch_samples:
            loss = compute_loss(model, inputs, loss_fn, num_items_in_batch)
            loss.backward()
        optimizer.step()
        model.zero_grad()
