# expect: failed|crashed|error
# Rank 1 SIGKILLs every other process of its session and process group (its peers, and the child
# that forked them): the run ends with a verdict, grind survives, nothing is left running.
import os
import signal

import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    if dist.get_rank() == 1:
        me = os.getpid()
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != me:
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
        os.killpg(0, signal.SIGKILL)
    return (token_losses * mask).sum()
