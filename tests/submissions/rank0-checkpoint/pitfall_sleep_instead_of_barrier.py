# expect: failed pitfall=no-barrier
# The other ranks sleep "long enough" instead of waiting for rank 0: nothing ties their return
# to the end of the write, so on a slow disk or a loaded machine they read no file.
import time

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    else:
        time.sleep(6)
