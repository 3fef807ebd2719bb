# expect: failed pitfall=reduced-loss
# Averages the loss across ranks so the logged value is global; the gradient does not follow.
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    m = mask.float().to(token_losses.dtype)
    loss = (token_losses * m).sum() / m.sum()
    dist.all_reduce(loss, op=dist.ReduceOp.SUM)
    return loss / dist.get_world_size()
