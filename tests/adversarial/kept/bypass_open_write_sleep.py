# expect: failed pitfall=-
# exercise: rank0-checkpoint
# attack: rank 0 serialises the state_dict into memory with torch.serialization's internals (not
# torch.save, which the checks hold) and writes the bytes with a plain open(); the other ranks
# sleep instead of waiting in a barrier. The ranks never wait for rank 0: it must fail (rank 0's
# torch.save count, and grind's "written by a held torch.save").
import io
import time

import torch.distributed as dist
import torch.serialization as serialization


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        buffer = io.BytesIO()
        with serialization._open_zipfile_writer(buffer) as writer:
            serialization._save(model.module.state_dict(), writer, serialization.pickle, 2, False)
        with open(path, "wb") as handle:
            handle.write(buffer.getvalue())
    else:
        time.sleep(1.0)
