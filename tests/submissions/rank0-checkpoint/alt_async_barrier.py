# expect: passed
# The barrier issued asynchronously, then waited on: every rank blocks in wait() until rank 0,
# done writing, joins the barrier too. Keys stripped by slicing the wrapper's names.
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        prefix = "module."
        state = {name[len(prefix):]: tensor for name, tensor in model.state_dict().items()}
        torch.save(state, path)
    pending = dist.barrier(async_op=True)
    pending.wait()
