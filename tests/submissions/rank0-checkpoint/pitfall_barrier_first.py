# expect: failed pitfall=no-barrier
# The barrier is there, but before the write: the ranks meet, then leave while rank 0 writes.
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    dist.barrier()
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
