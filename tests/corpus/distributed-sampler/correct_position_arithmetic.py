# expect: passed
# source: independent answer: no padded list is built; rank r's i-th item sits at position r + i * R of the cyclic ordering, read modulo the length
import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    if shuffle:
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        ordering = torch.randperm(length, generator=g)
    else:
        ordering = torch.arange(length)
    count = length // world_size if drop_last else (length + world_size - 1) // world_size
    positions = rank + world_size * torch.arange(count)
    return ordering[positions % length] if count else torch.zeros(0, dtype=torch.int64)
