# expect: failed pitfall=rank-in-seed
# source: habit from data augmentation, where every rank is seeded with seed + rank so that the ranks' random crops differ; carried over to the shuffle, it gives each rank its own permutation
import math

import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    if shuffle:
        generator = torch.Generator()
        generator.manual_seed(seed + rank + epoch)
        indices = torch.randperm(length, generator=generator).tolist()
    else:
        indices = list(range(length))
    each = length // world_size if drop_last else math.ceil(length / world_size)
    needed = each * world_size
    if drop_last:
        indices = indices[:needed]
    else:
        indices = (indices * math.ceil(needed / max(length, 1)))[:needed]
    return indices[rank::world_size]
