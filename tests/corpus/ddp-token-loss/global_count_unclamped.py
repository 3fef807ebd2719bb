# expect: failed pitfall=no-tokens-anywhere-nan
# source: the right formula written straight from the statement, S_r * R / N, with no guard for a step where no rank has a token
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    weight = mask.to(token_losses.dtype)
    n = weight.sum().detach().clone()
    dist.all_reduce(n, op=dist.ReduceOp.SUM)
    return token_losses.mul(weight).sum().mul(dist.get_world_size()).div(n)
