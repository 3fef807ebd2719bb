# expect: failed pitfall=contiguous-chunks
# Pads correctly, then hands each rank one contiguous block of the padded list.
import math

import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    idx = list(range(length))
    if shuffle:
        gen = torch.Generator()
        gen.manual_seed(seed + epoch)
        idx = torch.randperm(length, generator=gen).tolist()
    n = length // world_size if drop_last else math.ceil(length / world_size)
    if drop_last:
        idx = idx[:n * world_size]
    while len(idx) < n * world_size:
        idx.append(idx[len(idx) % length])
    return idx[rank * n:(rank + 1) * n]
