# expect: failed pitfall=empty-rank-skips-collective
# source: an early exit for an all-padding batch ("no token, zero loss"), placed before the collective; the other ranks wait in it
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    m = mask.float().to(token_losses.dtype)
    if not bool(mask.any()):
        return (token_losses * m).sum()
    count = m.sum().detach().clone()
    dist.all_reduce(count)
    return (token_losses * m).sum() * dist.get_world_size() / count
