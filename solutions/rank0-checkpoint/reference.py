"""Reference: one checkpoint per job, written by global rank 0, that every rank can read when
the call returns."""

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    # local_rank is 0 on one process of every node: on two nodes, "local_rank == 0" means two
    # writers racing on the same file. The one process of the whole job is global rank 0.
    if dist.get_rank() == 0:
        # model is the DDP wrapper: its state_dict() names every entry "module.<key>". The bare
        # model's state_dict (parameters and buffers, such as BatchNorm's running statistics) has
        # the keys a plain, unwrapped model.load_state_dict expects later.
        torch.save(model.module.state_dict(), path)
    # Every rank, rank 0 included, meets here; rank 0 arrives only once the file is complete. So
    # no rank returns (and goes on to read the file, or exits) while it is still being written.
    dist.barrier()
