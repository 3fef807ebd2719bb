# expect: failed
# Only rank 0 asks for the global count: rank 1 never joins the all_reduce, so rank 0 waits for
# it forever. The judge reports the deadlock and where each rank was.
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    m = mask.to(token_losses.dtype)
    count = m.sum().detach().clone()
    if dist.get_rank() == 0:
        dist.all_reduce(count)
    return (token_losses * m).sum() * dist.get_world_size() / count.clamp(min=1.0)
