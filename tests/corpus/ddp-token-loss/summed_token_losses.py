# expect: failed pitfall=sum-not-normalised
# source: reduction="sum" picked so that every token counts equally, then never divided by anything
import torch


def ddp_token_loss(token_losses, mask):
    return torch.where(mask.bool(), token_losses, torch.zeros_like(token_losses)).sum()
