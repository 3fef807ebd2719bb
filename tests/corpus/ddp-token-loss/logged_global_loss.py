# expect: failed pitfall=empty-rank-nan+reduced-loss
# source: the logging recipe used as the training loss: each rank's mean is averaged across ranks with all_reduce so every rank reports the same number; its local mean is 0 / 0 on a rank without tokens
import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    weights = mask.to(token_losses.dtype)
    loss = (token_losses * weights).sum() / weights.sum()
    dist.all_reduce(loss)
    loss = loss / dist.get_world_size()
    return loss
