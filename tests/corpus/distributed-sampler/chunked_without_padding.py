# expect: failed pitfall=contiguous-chunks+no-padding
# source: two mistakes at once, the way list slicing invites them: blocks of ceil(length / R) cut from the unpadded ordering, so the last ranks get a short block or an empty one
import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    order = list(range(length))
    if shuffle:
        order = torch.randperm(length, generator=torch.Generator().manual_seed(seed + epoch)).tolist()
    if drop_last:
        order = order[:length // world_size * world_size]
    block = (len(order) + world_size - 1) // world_size
    return order[rank * block:(rank + 1) * block]
