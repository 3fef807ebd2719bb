# expect: failed pitfall=manual-all-reduce
# Accumulates locally, then averages the gradients with a hand-written all_reduce per parameter.
import torch.distributed as dist


def accumulate_gradients(model, microbatches, loss_fn):
    with model.no_sync():
        for x, y in microbatches:
            loss = loss_fn(model(x), y) / len(microbatches)
            loss.backward()
    world = dist.get_world_size()
    for param in model.module.parameters():
        dist.all_reduce(param.grad, op=dist.ReduceOp.SUM)
        param.grad.div_(world)
