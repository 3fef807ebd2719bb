# expect: failed pitfall=-
# exercise: rank0-checkpoint
# attack: no barrier for the rank that returns; on every rank but 0 a helper thread waits in a
# barrier and a receive from rank 0 (rank 0 answers both after its save), while the rank's own
# thread only sleeps a little and returns without waiting for the helper. The helper's waits made
# the rank look like one waiting for rank 0, so rank 0's save was let go during the sleep (passed
# for marks in this second review). Only a wait on the rank's main thread counts now: rank
# 0 stays held, the helpers' barrier times out, and the caught error fails the case.
import threading
import time

import torch
import torch.distributed as dist


def _helper():
    try:
        dist.barrier()
        dist.recv(torch.zeros(1), src=0)
    except RuntimeError:
        pass


def save_checkpoint(model, path, local_rank):
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        torch.save(model.module.state_dict(), path)
        dist.barrier()
        for peer in range(1, world):
            dist.send(torch.zeros(1), dst=peer)
        return
    helper = threading.Thread(target=_helper)
    helper.start()
    time.sleep(0.05)
    helper.join()
