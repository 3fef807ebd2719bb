# expect: failed pitfall=padded-count
# source: counts positions from the tensor's shape (batch * length), so padding is counted as tokens
import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    slots = torch.tensor(float(token_losses.shape[0] * token_losses.shape[1] if token_losses.dim() == 2
                               else token_losses.numel()), dtype=torch.float64)
    dist.all_reduce(slots)
    return (token_losses * mask).sum() * dist.get_world_size() / slots
