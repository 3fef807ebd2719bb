"""Gradient accumulation under DDP with no_sync. Run `grind run no-sync-accumulation` to check your answer."""

import contextlib

import torch
import torch.distributed as dist


def accumulate_gradients(model, microbatches, loss_fn):
    """Run forward and backward on each of this rank's microbatches so that, when it returns, every
    parameter's .grad holds the gradient of the mean loss over every example of every microbatch
    of every rank, with one gradient all-reduce in all (the last backward's).

    model:        a torch.nn.parallel.DistributedDataParallel model; its gradients start as None.
    microbatches: this rank's list of k (inputs, targets) pairs, all of the same size, on every rank.
    loss_fn:      loss_fn(model(inputs), targets) is the mean loss over one microbatch.

    The process group is already initialised. Do not zero the gradients and do not step: the
    caller owns the optimizer. The return value is not checked.
    """
    raise NotImplementedError("write accumulate_gradients")
