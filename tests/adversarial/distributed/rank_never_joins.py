# expect: failed
# Rank 1 leaves before the all_reduce that rank 0 waits in (it never joins it): the case ends at
# once with an error naming the rank that left and where the other was, not at the deadline,
# and no rank is left behind.
import os

import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    if dist.get_rank() == 1:
        os._exit(0)
    count = mask.sum().to(token_losses.dtype).detach().clone()
    dist.all_reduce(count)
    return (token_losses * mask).sum() * dist.get_world_size() / count
