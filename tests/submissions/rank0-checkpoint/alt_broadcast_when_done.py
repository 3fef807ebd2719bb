# expect: passed
# Rank 0 announces the finished file with a broadcast the other ranks wait in; keys stripped
# with str.removeprefix, values moved to CPU copies.
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    done = [False]
    if dist.get_rank() == 0:
        state = {key.removeprefix("module."): value.detach().cpu().clone()
                 for key, value in model.state_dict().items()}
        with open(path, "wb") as handle:
            torch.save(state, handle)
        done = [True]
    dist.broadcast_object_list(done, src=0)
    assert done[0]
