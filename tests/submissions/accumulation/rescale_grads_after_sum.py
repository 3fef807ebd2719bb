# expect: passed
"""Streaming version: backward the raw loss sums, count as we go, and divide the accumulated
gradients by the group's count just before stepping. No group list is ever built."""
import torch


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    count = 0
    pending = 0
    for i, mb in enumerate(microbatches):
        if pending == 0:
            optimizer.zero_grad(set_to_none=False)
        if len(mb) == 3:
            x, y, mask = mb
            losses = loss_fn(model(x), y)
            total = torch.where(mask, losses, torch.zeros_like(losses)).sum()
            count += int(mask.count_nonzero())
        else:
            x, y = mb
            total = loss_fn(model(x), y).sum()
            count += x.shape[0]
        total.backward()
        pending += 1
        if pending == k or i == len(microbatches) - 1:
            with torch.no_grad():
                for p in model.parameters():
                    if p.grad is not None:
                        p.grad.div_(count)
            optimizer.step()
            count = 0
            pending = 0
