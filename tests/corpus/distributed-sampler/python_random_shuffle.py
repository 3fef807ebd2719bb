# expect: failed pitfall=python-random-shuffle
# source: the shuffle written with the standard library (random.seed(seed + epoch) then random.shuffle), epoch included; every rank agrees, but the permutation is not torch's
import math
import random


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    idx = list(range(length))
    if shuffle:
        random.seed(seed + epoch)
        random.shuffle(idx)
    if drop_last and length % world_size:
        n = length // world_size
        idx = idx[:n * world_size]
    else:
        n = math.ceil(length / world_size)
        while len(idx) < n * world_size:
            idx += idx[:n * world_size - len(idx)]
    return idx[rank:n * world_size:world_size]
