"""Oracle: torch.nn.utils.clip_grad_norm_ on the unsharded model. Every rank gathers every rank's
gradient pieces (taken together they are the whole model's gradients), clips copies of all of
them with torch's own function, and keeps the clipped copies of its own pieces. Zero-size pieces
(a rank's empty shard) hold no entry and are left out of torch's call, which refuses an inf-norm
over an empty tensor; a rank that holds nothing still joins the gather."""

import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    mine = [p for p in parameters if p.grad is not None]
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, [p.grad.detach().clone() for p in mine])
    copies = [[torch.zeros_like(g, requires_grad=True) for g in grads] for grads in everyone]
    for grads, params in zip(everyone, copies):
        for g, p in zip(grads, params):
            p.grad = g.clone()
    total = torch.nn.utils.clip_grad_norm_([p for params in copies for p in params if p.numel()], max_norm,
                                           norm_type)
    for p, copy in zip(mine, copies[dist.get_rank()]):
        p.grad.copy_(copy.grad)
    return total
