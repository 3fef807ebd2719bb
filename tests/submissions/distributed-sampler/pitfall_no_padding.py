# expect: failed pitfall=no-padding
# A stride over the shuffled list as it is: when R does not divide the length, the first ranks
# get one item more.
import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    order = list(range(length))
    if shuffle:
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        order = [order[i] for i in torch.randperm(length, generator=g)]
    if drop_last:
        order = order[:len(order) - len(order) % world_size]
    return [order[i] for i in range(rank, len(order), world_size)]
