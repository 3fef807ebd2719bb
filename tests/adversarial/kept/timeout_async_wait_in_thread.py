# expect: failed pitfall=-
# exercise: rank0-checkpoint
# attack: no barrier with rank 0; on the other ranks a thread waits on an asynchronous barrier's
# handle with a short timeout (rank 0 never joins it) and swallows the error, while the rank's
# own thread sleeps, then joins it. The watcher saw a rank waiting in a collective; the wait was
# a timer. The handle's wait ended in an error the code caught: the case fails.
import datetime
import threading
import time

import torch
import torch.distributed as dist


def _wait(handle):
    try:
        handle.wait(timeout=datetime.timedelta(milliseconds=600))
    except RuntimeError:
        pass


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
        return
    waiter = threading.Thread(target=_wait, args=(dist.barrier(async_op=True),))
    waiter.start()
    time.sleep(0.3)
    waiter.join()
