# expect: passed pitfall=-
# exercise: rank0-checkpoint
# attack: none; an honest overlapped save: rank 0 writes in a thread while every rank meets once
# in a barrier (standing for the rest of a step's collectives); rank 0 then joins its writer and
# all meet again, so no rank returns before the file is complete. It timed out before this
# issue's review: two threads of rank 0 wrote their report lines out of their numbers' order and
# the watcher dropped the save's request to be let go.
import threading

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    writer = None
    if dist.get_rank() == 0:
        writer = threading.Thread(target=torch.save, args=(model.module.state_dict(), path))
        writer.start()
    dist.barrier()
    if writer is not None:
        writer.join()
    dist.barrier()
