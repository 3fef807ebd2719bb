# expect: passed
"""No explicit accumulation: keep every microbatch's valid losses, concatenate the whole
group's losses and backpropagate their mean once. autograd walks all the microbatch graphs in
a single backward call per group."""
import torch


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    start = 0
    while start < len(microbatches):
        group = microbatches[start:start + k]
        start += k
        pieces = []
        for mb in group:
            losses = loss_fn(model(mb[0]), mb[1])
            pieces.append(losses[mb[2]] if len(mb) == 3 else losses.reshape(-1))
        optimizer.zero_grad()
        torch.cat(pieces).mean().backward()
        optimizer.step()
