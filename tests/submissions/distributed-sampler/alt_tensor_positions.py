# expect: passed
# All in tensors: the positions a rank reads are arange(total)[rank::R], wrapped onto the ordering
# with a modulo (which is the padding); returns a tensor.
import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    if shuffle:
        g = torch.Generator().manual_seed(seed + epoch)
        order = torch.randperm(length, generator=g)
    else:
        order = torch.arange(length)
    if drop_last and length % world_size:
        total = length - length % world_size
    else:
        total = (length + world_size - 1) // world_size * world_size
    positions = torch.arange(total)[rank::world_size]
    if not len(positions):
        return positions
    return order[positions % length]
