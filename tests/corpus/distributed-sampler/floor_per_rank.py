# expect: failed pitfall=always-floor
# source: "each rank gets len // world_size" recited as the rule, so the remainder is dropped even when drop_last is off and nothing is ever padded
import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    if shuffle:
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        perm = torch.randperm(length, generator=g)
    else:
        perm = torch.arange(length)
    per_rank = length // world_size
    return perm[:per_rank * world_size][rank::world_size].tolist()
