# expect: failed pitfall=barrier-in-writer-branch
# source: the barrier written right after torch.save and indented with it, so only rank 0 calls it; the others return and rank 0 waits alone
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        state = model.module.state_dict()
        torch.save(state, path)
        dist.barrier()
