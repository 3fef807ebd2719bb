# expect: failed pitfall=padding-once
# source: look-alike of mmdetection's DistributedSampler before open-mmlab/mmdetection#4257 (the same single-slice padding as PyTorch <= 1.7's DistributedSampler), written without its length assertion: a tiny dataset leaves the last ranks short
import math

import torch


def rank_indices(length, world_size, rank, shuffle=True, seed=0, epoch=0, drop_last=False):
    if shuffle:
        g = torch.Generator()
        g.manual_seed(epoch + seed)
        indices = torch.randperm(length, generator=g).tolist()
    else:
        indices = torch.arange(length).tolist()
    if drop_last and length % world_size:
        total_size = (length // world_size) * world_size
        indices = indices[:total_size]
    else:
        total_size = math.ceil(length / world_size) * world_size
        # one slice of the ordering tops it up (enough unless the dataset is tiny)
        indices += indices[:(total_size - len(indices))]
    return indices[rank::world_size]
