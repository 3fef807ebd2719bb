# expect: passed
# source: look-alike of fairseq's trainer with --update-freq: criterion returns summed losses and a sample_size (tokens), grads multiplied by 1 / total sample_size before the step
import torch


def criterion(model, sample, loss_fn):
    """(summed loss, sample_size): fairseq sums over tokens and reports how many there were."""
    if len(sample) == 3:
        x, y, mask = sample
        loss = loss_fn(model(x), y).masked_select(mask).sum()
        return loss, mask.sum().item()
    x, y = sample
    return loss_fn(model(x), y).sum(), x.size(0)


def grouped(iterable, chunk_size):
    chunk = []
    for item in iterable:
        chunk.append(item)
        if len(chunk) == chunk_size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    params = [p for p in model.parameters() if p.requires_grad]
    for samples in grouped(microbatches, k):
        optimizer.zero_grad()
        sample_size = 0
        for sample in samples:
            loss, size = criterion(model, sample, loss_fn)
            loss.backward()
            sample_size += size
        grads = [p.grad for p in params if p.grad is not None]
        torch._foreach_mul_(grads, 1.0 / sample_size)  # multiply_grads(1 / sample_size)
        optimizer.step()
