# expect: failed pitfall=padding-from-dataset
# source: the padding built before thinking about the shuffle: extra indices 0, 1, 2, ... of the dataset appended to the permutation
import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    if shuffle:
        gen = torch.Generator().manual_seed(seed + epoch)
        order = torch.randperm(length, generator=gen).tolist()
    else:
        order = list(range(length))
    if drop_last:
        keep = (length // world_size) * world_size
        order = order[:keep]
    else:
        missing = -(-length // world_size) * world_size - length
        order = order + [i % length for i in range(missing)]
    return order[rank::world_size]
