"""The indices DistributedSampler gives one rank. Run `grind run distributed-sampler` to check your answer."""

import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    """The dataset indices rank `rank` of `world_size` reads in epoch `epoch`, in order, exactly as
    torch.utils.data.DistributedSampler(dataset, world_size, rank, shuffle, seed, drop_last) yields
    them after set_epoch(epoch), for a dataset of `length` items.

    Returns a list of ints (a 1-D integer tensor is fine too).
    """
    raise NotImplementedError("write rank_indices")
