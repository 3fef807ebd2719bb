# expect: passed
# source: independent answer: the global rank from torchrun's RANK variable (converted), the bare model found by unwrapping every .module layer, gloo's monitored_barrier as the meeting point
import os

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    bare = model
    while hasattr(bare, "module"):
        bare = bare.module
    if int(os.environ["RANK"]) == 0:
        torch.save(bare.state_dict(), path)
    dist.monitored_barrier()
