# expect: passed pitfall=-
# exercise: rank0-checkpoint
# attack: none; an honest answer that waits through the process group's own method: rank 0
# saves, then every rank calls the default group's barrier() and waits on the handle it returns.
# Not traced before this issue's review (only the torch.distributed functions were), so rank 0's
# save sat out the whole hold and the ranks failed on gloo's timeout.
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    dist.group.WORLD.barrier().wait()
