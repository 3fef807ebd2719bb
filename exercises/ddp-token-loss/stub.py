"""The token-mean loss under DDP. Run `grind run ddp-token-loss` to check your answer."""

import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    """The loss this rank backpropagates, so that after DDP averages the gradients over the ranks
    they equal the gradient of the mean loss over every valid token of every rank.

    token_losses: this rank's per-position losses, shape [batch, length], part of the graph.
    mask:         same shape, bool or 0/1 floats: which positions are real tokens (not padding).

    The process group is already initialised: torch.distributed is ready to use.
    Returns a scalar tensor to call .backward() on.
    """
    raise NotImplementedError("write ddp_token_loss")
