# expect: failed pitfall=local-rank-zero
# "Main process" taken from LOCAL_RANK, as a single-node script would: one writer per node.
import os

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    is_main = int(os.environ.get("LOCAL_RANK", "0")) == 0
    if is_main:
        torch.save(model.module.state_dict(), path)
    dist.barrier()
