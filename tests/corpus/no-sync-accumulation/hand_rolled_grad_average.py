# expect: failed pitfall=manual-all-reduce
# source: the hand-rolled data parallelism of older codebases: accumulate locally under no_sync, then average every .grad with dist.all_reduce and divide by the world size
import torch.distributed as dist


def accumulate_gradients(model, microbatches, loss_fn):
    k = len(microbatches)
    with model.no_sync():
        for batch_in, batch_target in microbatches:
            loss = loss_fn(model(batch_in), batch_target)
            (loss / k).backward()
    world = dist.get_world_size()
    for param in model.parameters():
        if param.grad is not None:
            dist.all_reduce(param.grad, op=dist.ReduceOp.SUM)
            param.grad.div_(world)
