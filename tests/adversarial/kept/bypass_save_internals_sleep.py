# expect: failed pitfall=-
# exercise: rank0-checkpoint
# attack: the checkpoint is written without torch.save (torch.serialization's own _save and zip
# writer), so the checks' torch.save wrapper never holds the write until the other ranks have
# settled; the other ranks sleep instead of waiting in a barrier. No forgery: on an idle machine
# the sleepers wake after the file is complete. The ranks never wait for rank 0; grind cannot
# tell a sleep from a barrier for a write it could not hold, so it must fail: rank 0's torch.save
# count says 0 first, and grind's "written by a held torch.save" too (the marks scan refuses
# reaching pickle).
import time

import torch.distributed as dist
import torch.serialization as serialization


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        with serialization._open_zipfile_writer(path) as writer:
            serialization._save(model.module.state_dict(), writer, serialization.pickle, 2, False)
    else:
        time.sleep(1.0)  # "long enough" for rank 0: a sleep is not a barrier
