# expect: failed pitfall=local-mean
# The single-GPU habit: the mean over this rank's real tokens, left for DDP to average.
import torch


def ddp_token_loss(token_losses, mask):
    return token_losses[mask.bool()].mean()
