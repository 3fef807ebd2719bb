# expect: failed pitfall=no-barrier
# exercise: rank0-checkpoint
# attack: no barrier; every rank other than 0 forks a process that outlives its call, waits until
# the kept checkpoint is complete, and then touches its markers in the kept folder (as a late
# "snapshot" would), so that any time the parent compares looks as
# if the rank had returned after the file was written. For marks a process, unlike a thread, is
# not refused. What decides is what the child saw at the path when the rank's record arrived,
# which nothing done later can change.
import os
import time

import torch
import torch.distributed as dist


def _retouch(folder):
    path = os.path.join(folder, "checkpoint.pt")
    for _ in range(3000):
        time.sleep(0.005)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if data[-22:-18] == b"PK\x05\x06":
            for name in os.listdir(folder):
                if not name.startswith("done.rank"):
                    continue  # the file and "held" are rank 0's: touching them would fail rank 0 too
                try:
                    os.utime(os.path.join(folder, name))
                except OSError:
                    pass
            return


def save_checkpoint(model, path, local_rank):
    rank = dist.get_rank()
    if rank == 0:
        torch.save(model.module.state_dict(), path)
    elif os.fork() == 0:
        _retouch(os.path.dirname(path))
        os._exit(0)
