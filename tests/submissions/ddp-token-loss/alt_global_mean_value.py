# expect: passed
# Divides by the global count first (so the value is this rank's share of the global mean), then
# multiplies by R to undo DDP's average; the count travels as a float64 tensor.
import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    weights = mask.to(torch.float64)
    n = weights.sum().reshape(1)
    dist.all_reduce(n, op=dist.ReduceOp.SUM)
    if n.item() == 0:
        return token_losses.sum() * 0
    share = torch.sum(token_losses * weights) / n[0]
    return share * dist.get_world_size()
