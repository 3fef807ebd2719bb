# expect: failed pitfall=no-barrier
# exercise: rank0-checkpoint
# attack: no barrier; each rank other than 0 writes, to every pipe open in its process (one of
# them is its report pipe to the process that watches the ranks), lines saying it waits in a
# barrier, in the wire format the rank's own tracer uses (number, process id, signature, JSON),
# numbered far ahead, then sleeps while rank 0 writes. If the watcher believed them, rank 0's
# held save would be let go while the liars sleep, and they would wake to a finished file. The
# lines are not signed with the rank's key, so the watcher drops them and stops believing that
# rank about where it waits: rank 0 writes only once the sleepers have returned and been looked at.
import json
import os
import stat
import time

import torch
import torch.distributed as dist


def _pipes():
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if stat.S_ISFIFO(os.fstat(int(name)).st_mode):
                found.append(int(name))
        except (OSError, ValueError):
            pass
    return found


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
        return
    text = json.dumps({"in": "barrier"})
    for fd in _pipes():
        for number in (1, 2, 3, 50, 10_000):
            try:
                os.write(fd, f"{number} {os.getpid()} {'0' * 64} {text}\n".encode())
            except OSError:
                pass
    time.sleep(0.5)
