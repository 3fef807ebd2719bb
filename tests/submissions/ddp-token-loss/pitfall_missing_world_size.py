# expect: failed pitfall=missing-world-size
# The global count is right, but DDP's average over ranks is not undone.
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    m = mask.to(token_losses.dtype)
    total = m.sum().detach().clone()
    dist.all_reduce(total)
    return (token_losses * m).sum() / total.clamp(min=1.0)
