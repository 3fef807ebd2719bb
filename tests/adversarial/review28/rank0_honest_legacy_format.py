# expect: failed (practice and marks): a false positive, the same before issue 28's change (db47314)
# exercise: rank0-checkpoint
# honest (false-positive probe): rank 0 saves with torch.save(..., _use_new_zipfile_serialization=False),
# the pre-1.6 format still written by code that must load in old torch (some conversion scripts
# and older codebases). torch.load(path, weights_only=True) loads it; grind's own reader reads
# only the zip format, and "readable at return" asks for a finished zip.
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path, _use_new_zipfile_serialization=False)
    dist.barrier()
