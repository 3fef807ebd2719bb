# expect: failed pitfall=epoch-ignored
# source: the training-script bug the seed page warns about: a sampler object that does read its epoch, built once per call but never told the epoch (no sampler.set_epoch(epoch)), so every epoch reuses epoch 0's permutation
import torch


class RankSampler:
    def __init__(self, n, replicas, rank, shuffle=True, seed=0, drop_last=False):
        self.n, self.replicas, self.rank = n, replicas, rank
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        perm = list(range(self.n))
        if self.shuffle:
            gen = torch.Generator()
            gen.manual_seed(self.seed + self.epoch)
            perm = torch.randperm(self.n, generator=gen).tolist()
        if self.drop_last:
            keep = (self.n // self.replicas) * self.replicas
            perm = perm[:keep]
        else:
            keep = -(-self.n // self.replicas) * self.replicas
            perm = [perm[i % self.n] for i in range(keep)]
        return iter(perm[self.rank:keep:self.replicas])


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    sampler = RankSampler(length, world_size, rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
    return list(sampler)
