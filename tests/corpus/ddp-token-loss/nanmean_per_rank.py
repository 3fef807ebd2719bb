# expect: failed pitfall=local-mean
# source: padding turned into NaN and skipped with torch.nanmean: the single-GPU masked mean, left for DDP to average
import torch


def ddp_token_loss(token_losses, mask):
    keep = mask.bool()
    return torch.nanmean(token_losses.masked_fill(~keep, float("nan")))
