# expect: failed pitfall=pickled-module
# source: the "save the entire model" recipe (torch.save(model) and torch.load to get it back), applied to the unwrapped module on rank 0
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module, path)
    dist.barrier()
