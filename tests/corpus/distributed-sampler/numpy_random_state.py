# expect: failed pitfall=numpy-permutation
# source: an index sampler from a numpy-first codebase: np.random.RandomState(seed + epoch) shuffles an arange in place, the rest follows DistributedSampler
import numpy as np


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    order = np.arange(length)
    if shuffle:
        np.random.RandomState(seed + epoch).shuffle(order)
    if drop_last:
        per = length // world_size
        order = order[:per * world_size]
    else:
        per = -(-length // world_size)
        order = np.resize(order, per * world_size) if length else order
    return order[rank::world_size].tolist()
