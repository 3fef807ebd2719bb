# expect: passed (practice and marks)
# exercise: rank0-checkpoint
# honest (false-positive probe): the production style of torchtune / Lightning's
# `_atomic_save` and many training repos: rank 0 serialises with torch.save into memory, writes
# a temporary file next to the target, fsyncs it and os.replace()s it into place (a reader never
# sees half a file); then every rank waits at a barrier. The final file is written by os.write
# and renamed, not by torch.save on the path.
import io
import os

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        buffer = io.BytesIO()
        torch.save(model.module.state_dict(), buffer)
        temporary = f"{path}.tmp"
        with open(temporary, "wb") as handle:
            handle.write(buffer.getvalue())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    dist.barrier()
