# expect: forbidden
# Gathers every shard and lets torch clip: the point of the exercise is to write it.
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [p for p in parameters if p.grad is not None]
    return torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
