# expect: failed pitfall=epoch-ignored
# A sampler object whose shuffle is seeded once, from the seed; the epoch it is given is stored
# and never used.
import torch


class Shard:
    def __init__(self, length, world_size, rank, shuffle, seed, drop_last):
        self.length, self.world_size, self.rank = length, world_size, rank
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        if self.shuffle:
            order = torch.randperm(self.length, generator=torch.Generator().manual_seed(self.seed)).tolist()
        else:
            order = list(range(self.length))
        if self.drop_last:
            order = order[:self.length // self.world_size * self.world_size]
        else:
            need = -(-self.length // self.world_size) * self.world_size
            order = [order[i % self.length] for i in range(need)]
        return iter(order[self.rank::self.world_size])


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    sampler = Shard(length, world_size, rank, shuffle, seed, drop_last)
    sampler.set_epoch(epoch)
    return list(sampler)
