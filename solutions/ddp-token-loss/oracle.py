"""Oracle: the single-process truth, built by torch. Every rank gathers every rank's token losses
with torch.distributed.nn's differentiable all_gather and takes the plain masked mean over all
of them, as one process holding the whole batch would. all_gather's backward hands each rank R
copies of its tokens' share, which DDP's average divides by R again."""

import torch
import torch.distributed as dist
from torch.distributed.nn.functional import all_gather


def ddp_token_loss(token_losses, mask):
    # all_gather needs one shape on every rank: flatten, and pad (as masked-out padding) to the longest.
    size = torch.tensor([token_losses.numel()])
    dist.all_reduce(size, op=dist.ReduceOp.MAX)
    extra = int(size) - token_losses.numel()
    token_losses = torch.nn.functional.pad(token_losses.reshape(-1), (0, extra))
    mask = torch.nn.functional.pad(mask.reshape(-1).to(token_losses.dtype), (0, extra))
    losses = torch.cat([t.reshape(-1) for t in all_gather(token_losses)])
    masks = [torch.empty_like(mask) for _ in range(dist.get_world_size())]
    dist.all_gather(masks, mask)
    keep = torch.cat([m.reshape(-1) for m in masks]).to(torch.bool)
    if not bool(keep.any()):
        return losses.sum() * 0.0
    return losses[keep].mean()
