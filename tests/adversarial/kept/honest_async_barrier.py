# expect: passed pitfall=-
# exercise: rank0-checkpoint
# attack: none; an honest answer written as some training loops write it: rank 0 saves, then every
# rank waits on an asynchronous barrier's handle (dist.barrier(async_op=True).wait()). The rank
# waits in the collective when it calls wait(), not when it issues it; the watcher must see that
# wait (the tracer's handle says so), or rank 0's save would sit out the whole hold (12 s).
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    dist.barrier(async_op=True).wait()
