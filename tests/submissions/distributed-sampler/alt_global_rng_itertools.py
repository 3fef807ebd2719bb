# expect: passed
# Seeds the global RNG inside fork_rng (same stream as a seeded Generator), pads with
# itertools.cycle, and deals the items out with islice.
import itertools
import math

import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    if shuffle:
        with torch.random.fork_rng():
            torch.manual_seed(seed + epoch)
            base = torch.randperm(length).tolist()
    else:
        base = list(range(length))
    if drop_last:
        each = math.floor(length / world_size)
    else:
        each = math.ceil(length / world_size)
    padded = list(itertools.islice(itertools.cycle(base), each * world_size)) if base else []
    return list(itertools.islice(padded, rank, None, world_size))
