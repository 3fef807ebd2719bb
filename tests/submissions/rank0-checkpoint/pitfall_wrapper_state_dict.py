# expect: failed pitfall=module-prefix
# Right writer and barrier, but the state_dict of the DDP wrapper itself.
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    rank = dist.get_rank()
    if rank == 0:
        checkpoint = model.state_dict()
        torch.save(checkpoint, path)
    dist.barrier()
