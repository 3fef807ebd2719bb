# expect: failed pitfall=hard-coded-world-size
# source: written for a two-GPU box: the factor R is the literal 2
import torch
import torch.distributed as dist

WORLD = 2


def ddp_token_loss(token_losses, mask):
    n = mask.sum().to(torch.float64)
    dist.all_reduce(n)
    return (token_losses * mask.to(token_losses.dtype)).sum() * WORLD / torch.clamp(n, min=1)
