# expect: failed pitfall=count-max
# source: the reduce op copied from a max-length or inf-norm helper: the ranks agree on the largest token count instead of the total
import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    valid = mask.to(dtype=token_losses.dtype)
    n_tokens = valid.sum().detach().clone()
    dist.all_reduce(n_tokens, op=dist.ReduceOp.MAX)
    n_tokens = torch.clamp(n_tokens, min=1.0)
    return torch.sum(token_losses * valid) * dist.get_world_size() / n_tokens
