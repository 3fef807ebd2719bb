# expect: failed pitfall=no-barrier
# source: the barrier written to "let every rank finish the epoch" before the save, none after it
import torch
import torch.distributed


def save_checkpoint(model, path, local_rank):
    torch.distributed.barrier()
    if torch.distributed.get_rank() != 0:
        return
    net = model.module
    torch.save(net.state_dict(), path)
