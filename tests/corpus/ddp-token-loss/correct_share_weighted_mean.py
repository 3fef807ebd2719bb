# expect: passed
# source: independent answer: the local mean (guarded on an empty rank) weighted by the rank's share of all tokens, times R for DDP's average
import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    w = mask.to(token_losses.dtype)
    mine = w.sum()
    everyone = mine.detach().clone()
    dist.all_reduce(everyone)
    if mine.item() == 0:
        local_mean = (token_losses * w).sum()  # a zero that stays in the graph
    else:
        local_mean = (token_losses * w).sum() / mine
    share = mine / everyone.clamp(min=1)
    return local_mean * share * dist.get_world_size()
