# expect: failed pitfall=-
# exercise: rank0-checkpoint
# says: written by a held torch.save
# attack: rank 0 writes the checkpoint without torch.save (torch.serialization's internals), so the
# checks never hold the write; the other ranks sleep instead of waiting in a barrier; and every
# rank rewrites the checks' in-process torch.save counter (gc) to what a correct answer's is. The
# sleepers wake after the file is complete, so a rank's own look at the file "found" it: before
# grind read the kept file from outside, this wrong answer passed. No held save preceded the
# file's last change (the kernel's ctimes say so): "written by a held torch.save" is 0, grind's.
import gc
import time

import torch.distributed as dist
import torch.serialization as serialization


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        with serialization._open_zipfile_writer(path) as writer:
            serialization._save(model.module.state_dict(), writer, serialization.pickle, 2, False)
    else:
        time.sleep(1.0)
    for obj in gc.get_objects():
        if type(obj).__name__ == "_Watch" and hasattr(obj, "saves"):
            obj.saves = int(dist.get_rank() == 0)
