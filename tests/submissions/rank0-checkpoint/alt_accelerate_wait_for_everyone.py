# expect: passed
# Written the way Accelerate's docs save: wait_for_everyone() before the save (so no rank is still
# training) and after it (so no rank goes on before the file exists), the main process writes the
# unwrapped model's state_dict.
import torch
import torch.distributed as dist


def wait_for_everyone():
    dist.barrier()


def save_checkpoint(model, path, local_rank):
    wait_for_everyone()
    unwrapped = getattr(model, "module", model)
    if dist.get_rank() == 0:
        torch.save(unwrapped.state_dict(), path)
    wait_for_everyone()
