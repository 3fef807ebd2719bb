# expect: failed pitfall=no-epsilon
# source: clip coefficient written from the formula on a whiteboard, max_norm / total in Python floats, without torch's 1e-6
import torch
import torch.distributed as dist


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    big_p = float(norm_type)
    dtype = grads[0].dtype if grads else torch.float32
    if big_p == float("inf"):
        mine = torch.tensor(max([g.abs().max().item() for g in grads if g.numel()] or [0.0]), dtype=dtype)
        dist.all_reduce(mine, op=dist.ReduceOp.MAX)
        total = mine.item()
    else:
        mine = torch.tensor(sum((g.abs() ** big_p).sum().item() for g in grads), dtype=dtype)
        dist.all_reduce(mine, op=dist.ReduceOp.SUM)
        total = mine.item() ** (1.0 / big_p)
    ratio = max_norm / total
    if ratio < 1.0:
        for g in grads:
            g.mul_(ratio)
    return total
