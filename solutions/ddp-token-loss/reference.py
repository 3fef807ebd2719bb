"""Reference: the loss each rank backpropagates so that DDP's gradient average is the gradient of
the mean over every valid token of every rank."""

import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    # This rank's share: the sum of its valid tokens' losses (padding contributes nothing).
    mask = mask.to(token_losses.dtype)
    local_sum = (token_losses * mask).sum()

    # The global token count N = N_0 + ... + N_{R-1}: a plain number, so summing it across ranks
    # needs no gradient. Every rank gets the same N.
    count = mask.sum().detach().clone()
    dist.all_reduce(count, op=dist.ReduceOp.SUM)

    # DDP divides the summed gradients by R. Multiplying by R / N here cancels that division, so
    # the update is sum over all tokens of the gradient / N: the global token mean.
    # N = 0 (no valid token anywhere) would be 0/0: the loss is then zero on every rank.
    world = dist.get_world_size()
    return local_sum * world / count.clamp(min=1)
