# expect: failed pitfall=barrier-in-reader-branch
# source: "the others wait for rank 0" taken literally: the barrier is in the else branch, and the writer never joins it
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    is_writer = dist.get_rank() == 0
    if is_writer:
        torch.save({k: v for k, v in model.module.state_dict().items()}, path)
    else:
        dist.barrier()
