# expect: failed pitfall=empty-rank-nan
# source: starts from the familiar local mean and reweights it by this rank's share of the tokens, mean_r * N_r * R / N: right wherever N_r > 0, 0 / 0 where N_r = 0
import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    w = mask.to(token_losses.dtype)
    n_local = w.sum()
    mean_local = (token_losses * w).sum() / n_local
    n_all = n_local.detach().clone()
    dist.all_reduce(n_all)
    return mean_local * (n_local * dist.get_world_size() / n_all.clamp(min=1))
