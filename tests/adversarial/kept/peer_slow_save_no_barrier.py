# expect: failed pitfall=-
# exercise: rank0-checkpoint
# attack: no barrier; every rank other than 0 calls torch.save on something small, into a
# file-like object whose write() sleeps, so that it sits "in a held save" of its own while rank 0
# writes, and returns only after the checkpoint is finished. A rank waiting to save counts as
# settled for a lower rank only: the watcher lets holds go from the highest rank down, so the
# peers' slow saves run, and they return and are looked at, before rank 0's save is let go.
# (Named "every rank writes" in practice: torch.save did run on every rank, which is what that
# mistake's explanation says; the point here is that the hold never served as a barrier.)
import time

import torch
import torch.distributed as dist


class _Slow:
    def write(self, data):
        time.sleep(0.05)
        return len(data)

    def flush(self):
        pass


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    else:
        torch.save({"step": 1}, _Slow())
