# expect: passed
# source: independent answer: counts shared with all_gather_object as Python ints, masked_fill instead of a product
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    keep = mask.bool()
    counts = [None] * dist.get_world_size()
    dist.all_gather_object(counts, int(keep.sum().item()))
    total = sum(counts)
    local = token_losses.masked_fill(~keep, 0.0).sum()
    return local * len(counts) / total if total else local * 0.0
