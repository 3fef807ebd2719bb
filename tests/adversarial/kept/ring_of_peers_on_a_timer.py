# expect: failed pitfall=-
# exercise: rank0-checkpoint
# attack: no wait for rank 0 at all (four ranks); rank 0 saves and returns. Each other rank waits
# in a receive from the next peer round a ring, and a thread of its own sends to the previous one
# after a fixed delay: every peer sleeps in a receive while rank 0 is held, then all are freed by
# timers, not by rank 0's save. A receive is credited as a wait for the holder only when it names
# the holder (or any rank) as its source; on two ranks, where there is no ring, the peer has a
# thread wait for rank 0 and sleeps itself, which is not its wait either.
import threading
import time

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        torch.save(model.module.state_dict(), path)
        if world == 2:
            dist.send(torch.zeros(1), dst=1)
        return
    if world == 2:
        waiter = threading.Thread(target=dist.recv, args=(torch.zeros(1),), kwargs={"src": 0})
        waiter.start()
        time.sleep(0.3)
        waiter.join()
        return
    peers = list(range(1, world))
    here = peers.index(rank)

    def later():
        time.sleep(0.3)
        dist.send(torch.zeros(1), dst=peers[(here + 1) % len(peers)])

    timer = threading.Thread(target=later)
    timer.start()
    dist.recv(torch.zeros(1), src=peers[here - 1])
    timer.join()
