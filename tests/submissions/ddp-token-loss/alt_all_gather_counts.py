# expect: passed
# Every rank learns every count with all_gather (ints), sums them in Python; boolean indexing.
import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    keep = mask.bool()
    mine = torch.tensor([int(keep.sum())])
    counts = [torch.zeros_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(counts, mine)
    total = sum(int(c) for c in counts)
    picked = token_losses[keep]
    return picked.sum() * (dist.get_world_size() / max(total, 1))
