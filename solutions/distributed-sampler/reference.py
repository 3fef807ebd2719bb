"""Reference: the indices torch.utils.data.DistributedSampler hands one rank, written out."""

import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    # 1. One ordering of the whole dataset, the same on every rank: it may depend on the seed and
    #    the epoch, never on the rank, or the ranks' shares would overlap. Adding the epoch to the
    #    seed is all that set_epoch does: forget it and every epoch repeats the first one's order.
    if shuffle:
        generator = torch.Generator()
        generator.manual_seed(seed + epoch)
        order = torch.randperm(length, generator=generator).tolist()
    else:
        order = list(range(length))

    # 2. Every rank must get the same number of items: under DDP a rank that runs out of batches
    #    early stops joining the gradient all-reduce, and the others wait for it forever.
    if drop_last:
        # Cut the ordering's tail (after shuffling, so a different tail each epoch).
        per_rank = length // world_size
        order = order[:per_rank * world_size]
    else:
        # Pad by starting over from the ordering's own beginning, as often as needed: a dataset
        # of 1 item on 4 ranks gives that item to every rank.
        per_rank = -(-length // world_size)  # ceil(length / world_size) in integers
        order = [order[i % length] for i in range(per_rank * world_size)]

    # 3. A stride, not a block: rank r takes positions r, r + R, r + 2R, ... so the padding (at
    #    the end) lands on the last ranks, one extra item each at most.
    return order[rank::world_size]
