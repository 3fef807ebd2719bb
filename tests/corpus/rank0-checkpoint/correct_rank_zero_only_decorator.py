# expect: passed
# source: look-alike of PyTorch Lightning's rank_zero_only decorator, written for this exercise: the wrapped function runs where the RANK environment variable is 0 and returns None elsewhere
import functools
import os

import torch
import torch.distributed as dist


def rank_zero_only(fn):
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        if int(os.environ.get("RANK", 0)) == 0:
            return fn(*args, **kwargs)
        return None
    return wrapped


@rank_zero_only
def _write(state, path):
    torch.save(state, path)


def save_checkpoint(model, path, local_rank):
    _write(model.module.state_dict(), path)
    dist.barrier()
