# expect: passed
# source: independent answer leaning on numpy: np.resize repeats an array cyclically to any length, which is exactly the wrap-around padding; only the permutation comes from torch
import numpy as np
import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    if shuffle:
        perm = torch.randperm(length, generator=torch.Generator().manual_seed(seed + epoch)).numpy()
    else:
        perm = np.arange(length)
    per_rank = length // world_size if drop_last else -(-length // world_size)
    total = per_rank * world_size
    arranged = perm[:total] if drop_last else np.resize(perm, total)
    return arranged[rank::world_size].tolist()
