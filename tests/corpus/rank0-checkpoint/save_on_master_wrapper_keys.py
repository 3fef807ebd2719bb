# expect: failed pitfall=module-prefix
# source: a save_on_master helper in the style of the torchvision reference scripts (torch.save on global rank 0 only), called with the DDP model's own state_dict instead of the unwrapped model's
import torch
import torch.distributed as dist


def is_main_process():
    return dist.get_rank() == 0


def save_on_master(*args, **kwargs):
    if is_main_process():
        torch.save(*args, **kwargs)


def save_checkpoint(model, path, local_rank):
    save_on_master(model.state_dict(), path)
    dist.barrier()
