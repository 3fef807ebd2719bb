# expect: failed pitfall=rank-env-string
# source: the global rank read from torchrun's environment and compared without int(): the string '0' is never equal to 0, so no checkpoint is ever written
import os

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    global_rank = os.environ.get("RANK", 0)
    if global_rank == 0:
        torch.save(model.module.state_dict(), path)
    dist.barrier()
