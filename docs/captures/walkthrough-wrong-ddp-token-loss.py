import torch


def ddp_token_loss(token_losses, mask):
    # wrong on purpose: each rank's own token mean (DDP then averages the rank means)
    m = mask.to(token_losses.dtype)
    return (token_losses * m).sum() / m.sum().clamp(min=1)
