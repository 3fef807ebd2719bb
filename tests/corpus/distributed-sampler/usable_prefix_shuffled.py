# expect: failed pitfall=drop-before-shuffle
# source: drop_last done first, on the dataset: the usable prefix (length rounded down to a multiple of R) is what gets permuted, so the same last items are never read
import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    usable = length - length % world_size if drop_last else length
    if shuffle:
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        order = torch.randperm(usable, generator=g).tolist()
    else:
        order = list(range(usable))
    if not drop_last:
        target = -(-usable // world_size) * world_size
        order = [order[i % usable] for i in range(target)] if usable else []
    return order[rank::world_size]
