# expect: failed pitfall=contiguous-shards
# Shuffles and drops correctly, then lets torch.tensor_split cut the ordering into R pieces.
import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    if shuffle:
        order = torch.randperm(length, generator=torch.Generator().manual_seed(seed + epoch))
    else:
        order = torch.arange(length)
    if drop_last:
        order = order[:length - length % world_size]
    return torch.tensor_split(order, world_size)[rank].tolist()
