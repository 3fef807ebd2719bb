# expect: failed pitfall=every-rank-writes
# exercise: rank0-checkpoint
# Every rank writes the checkpoint, then the submission finds the checks' torch.save counter
# with gc and rewrites it so that only rank 0 seems to have saved. The counter lives in the
# learner's process; the bytes the run wrote, which grind counts from outside, show four writers.
import gc

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    torch.save(model.module.state_dict(), path)
    dist.barrier()
    for obj in gc.get_objects():
        if type(obj).__name__ == "_Watch" and hasattr(obj, "saves"):
            obj.saves = int(dist.get_rank() == 0)
