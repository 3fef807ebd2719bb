# expect: failed pitfall=missing-world-size
# source: look-alike of a trainer that gathers num_items_in_batch across ranks and divides the summed loss by it, forgetting that DDP averages afterwards
import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    num_items_in_batch = mask.sum().to(torch.float64)
    dist.all_reduce(num_items_in_batch)
    loss = (token_losses * mask).sum()
    return loss / num_items_in_batch.clamp(min=1)
