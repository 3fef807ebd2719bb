"""Tail-safe gradient accumulation. Run `grind run accumulation` to check your answer."""

import torch


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    """Train `model` for one epoch over `microbatches`, one optimizer step per group of k.

    model:        a torch.nn.Module; its prediction for a microbatch is model(x).
    microbatches: a list of (x, y) or (x, y, mask) tuples, of possibly different sizes.
    optimizer:    already built over model.parameters(); call its zero_grad() and step().
    k:            how many consecutive microbatches make one update (the last group may be shorter).
    loss_fn:      loss_fn(model(x), y) returns one loss per example, or one per token (the shape of
                  mask) for masked microbatches; nothing is averaged.

    Each step must see the gradient of the group's mean loss: the sum of the losses of every
    example (or valid token) in the group divided by how many there are. Returns nothing.
    """
    raise NotImplementedError("write train_epoch")
