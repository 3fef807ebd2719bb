# expect: failed pitfall=seed-ignored
# source: look-alike of DistributedSampler before PyTorch 1.6, which had no seed argument and seeded its generator with the epoch alone (the seed parameter accepted here is never used)
import math

import torch


class _OldStyleSampler:
    def __init__(self, length, num_replicas, rank, shuffle, drop_last):
        self.length, self.num_replicas, self.rank = length, num_replicas, rank
        self.shuffle, self.drop_last, self.epoch = shuffle, drop_last, 0
        if drop_last and length % num_replicas:
            self.num_samples = length // num_replicas
        else:
            self.num_samples = math.ceil(length / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def set_epoch(self, epoch):
        self.epoch = epoch

    def indices(self):
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.epoch)
            order = torch.randperm(self.length, generator=g).tolist()
        else:
            order = list(range(self.length))
        if self.drop_last:
            order = order[:self.total_size]
        else:
            order = (order * math.ceil(self.total_size / max(len(order), 1)))[:self.total_size]
        return order[self.rank:self.total_size:self.num_replicas]


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    sampler = _OldStyleSampler(length, world_size, rank, shuffle, drop_last)
    sampler.set_epoch(epoch)
    return sampler.indices()
