# expect: failed pitfall=-
# exercise: rank0-checkpoint
# attack: the file is kept where grind reads it after the run; rank 0 writes the wrapper's keys,
# every rank meets in the barrier, and then rank 0 puts a symlink in the file's place pointing at
# a correct checkpoint written elsewhere. grind never follows a link: the kept checkpoint is read
# as missing, and no correct file is credited.
import os

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
    dist.barrier()
    if dist.get_rank() == 0:
        good = path + ".good"
        torch.save(model.module.state_dict(), good)
        os.replace(path, path + ".old")
        os.symlink(good, path)
