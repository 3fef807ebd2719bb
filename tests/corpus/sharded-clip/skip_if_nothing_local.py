# expect: failed pitfall=empty-shard-returns-early
# source: the single-process guard "no gradients, nothing to do" (torch's clip_grad_norm_ returns 0 for an empty list) kept when porting clipping to ZeRO shards
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    flat = [p.grad.view(-1) for p in parameters if p.grad is not None]
    if sum(t.numel() for t in flat) == 0:
        return torch.tensor(0.0)
    ord_ = float(norm_type)
    if ord_ == float("inf"):
        acc = max(t.abs().max() for t in flat if t.numel())
        dist.all_reduce(acc, op=dist.ReduceOp.MAX)
        norm = acc
    else:
        acc = torch.zeros((), dtype=flat[0].dtype)
        for t in flat:
            acc += t.abs().pow(ord_).sum()
        dist.all_reduce(acc)
        norm = acc.pow(1.0 / ord_)
    scale = (max_norm / (norm + 1e-6)).clamp(max=1.0)
    for t in flat:
        t.mul_(scale)
    return norm
