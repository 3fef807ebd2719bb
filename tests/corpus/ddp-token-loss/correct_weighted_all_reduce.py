# expect: passed
# source: independent answer: the count and a dummy slot travel in one float64 vector all_reduce; the scale is applied as a detached factor
import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    valid = mask.to(dtype=torch.float64)
    stats = torch.stack([valid.sum(), torch.zeros((), dtype=torch.float64)])
    dist.all_reduce(stats)
    factor = dist.get_world_size() / torch.clamp(stats[0], min=1.0)
    return (token_losses * valid.to(token_losses.dtype)).sum() * factor
