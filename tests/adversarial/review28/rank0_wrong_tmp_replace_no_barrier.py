# expect: failed (practice and marks), pitfall no-barrier
# exercise: rank0-checkpoint
# hostile (wrong answer): the atomic-replace style without the barrier. Rank 0 writes a temp
# file with torch.save and renames it over the path; the other ranks return at once. A rename
# makes the final file appear in one step, so a look at the path sees either nothing or the
# whole file; the other ranks must still have been looked at before it existed.
import os

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        temporary = f"{path}.tmp"
        torch.save(model.module.state_dict(), temporary)
        os.replace(temporary, path)
