# expect: failed pitfall=local-count
# source: knows DDP averages, so multiplies by the world size, but keeps the local denominator
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    m = mask.float().to(token_losses.dtype)
    local_mean = (token_losses * m).sum() / m.sum().clamp(min=1)
    return local_mean * dist.get_world_size()
