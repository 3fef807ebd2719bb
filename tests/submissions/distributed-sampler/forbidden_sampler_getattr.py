# expect: forbidden
# Reaches torch's own sampler through a computed attribute name.
import torch.utils.data


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    cls = getattr(torch.utils.data, "Distributed" + "Sampler")
    sampler = cls(range(length), num_replicas=world_size, rank=rank, shuffle=shuffle, seed=seed,
                  drop_last=drop_last)
    sampler.set_epoch(epoch)
    return list(sampler)
