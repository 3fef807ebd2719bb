# expect: passed
# Written the way Hugging Face's Trainer saves: a "should save" flag for the main process of the
# whole job (the process group's rank 0, not the node's), the model unwrapped from DDP first, the
# file opened by the caller and handed to torch.save, then every process waits for it.
import torch
import torch.distributed as dist


def _unwrap(model):
    return model.module if hasattr(model, "module") else model


def save_checkpoint(model, path, local_rank):
    should_save = not dist.is_initialized() or dist.get_rank() == 0
    if should_save:
        with open(path, "wb") as handle:
            torch.save(_unwrap(model).state_dict(), handle)
    if dist.is_initialized():
        dist.barrier()
