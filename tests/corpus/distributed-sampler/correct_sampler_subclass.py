# expect: passed
# source: independent answer written as a project's own Sampler subclass (rank and world size passed in, set_epoch before each epoch), with the function as a thin wrapper
import math

import torch
from torch.utils.data import Sampler


class EvenShardSampler(Sampler):
    """Deals a dataset out to ranks so that every rank gets the same number of items."""

    def __init__(self, size, num_replicas, rank, shuffle=True, seed=0, drop_last=False):
        self.size, self.num_replicas, self.rank = size, num_replicas, rank
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        self.epoch = 0
        if drop_last and size % num_replicas:
            self.num_samples = size // num_replicas
        else:
            self.num_samples = math.ceil(size / num_replicas)

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __len__(self):
        return self.num_samples

    def __iter__(self):
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            order = torch.randperm(self.size, generator=g).tolist()
        else:
            order = list(range(self.size))
        wanted = self.num_samples * self.num_replicas
        while 0 < len(order) < wanted:
            order.extend(order[:wanted - len(order)])
        order = order[:wanted]
        yield from order[self.rank::self.num_replicas]


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    sampler = EvenShardSampler(length, world_size, rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
    sampler.set_epoch(epoch)
    return list(sampler)
