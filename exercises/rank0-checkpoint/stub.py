"""One checkpoint from a multi-node DDP job. Run `grind run rank0-checkpoint` to check your answer."""

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    """Write one checkpoint of `model` to `path` for the whole job, and return only when every
    rank can read it.

    model:      the model wrapped in torch.nn.parallel.DistributedDataParallel.
    path:       where the file goes; the same path on every rank (a shared filesystem).
    local_rank: this process's index on its own machine (what torchrun puts in LOCAL_RANK).

    Runs on every rank; the process group is already initialised. Returns nothing.
    """
    raise NotImplementedError("write save_checkpoint")
