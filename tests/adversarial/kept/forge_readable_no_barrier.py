# expect: failed pitfall=no-barrier
# exercise: rank0-checkpoint
# attack: rank 0 saves and nobody waits (no barrier); a profile hook then writes "readable at
# return": 1 into the observations the checks return on every rank. "readable at return" is now
# grind's, from the kernel's ctimes of the kept file and each rank's return marker.
import sys

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    def hook(frame, event, arg):
        if event == "return" and type(arg) is dict and "torch.save calls" in arg:
            arg["readable at return"] = 1
            sys.setprofile(None)

    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    sys.setprofile(hook)
