"""Oracle: torch's own DistributedSampler, asked for one rank's indices after set_epoch. A range
is a valid dataset for it: the sampler only needs its length."""

from torch.utils.data import DistributedSampler


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    sampler = DistributedSampler(range(length), num_replicas=world_size, rank=rank, shuffle=shuffle, seed=seed,
                                 drop_last=drop_last)
    sampler.set_epoch(epoch)
    return list(sampler)
