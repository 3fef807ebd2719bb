# expect: failed pitfall=no-barrier
# exercise: rank0-checkpoint
# hostile: a third red team's forgery, kept as found: the non-writers write an empty zip's 22-byte end record at the path
# Red team 3 (marks: ``grind grade`` on a one-student class folder; any level).
# 
# A wrong rank0-checkpoint answer: global rank 0 writes the bare state_dict and there is NO barrier.
# Every other rank, instead of waiting, writes 22 bytes at the checkpoint's path with plain
# ``open``/``write``: an empty zip's end-of-central-directory record (``PK\\x05\\x06`` and 18 zero
# bytes). ``checks._finished`` (system calls bound before the learner's file) only asks "a regular
# file whose last 22 bytes are an end record without comment", so the rank's "readable at return"
# is 1. The checks' save wrapper then lets rank 0 write (every peer has "returned"); torch.save
# truncates the fake and writes the real file, so after the barrier every rank reads the right
# state. ``torch.save calls`` stays 1/0/0/0 (no torch.save on the other ranks) and the witnessed
# write count grows by 22 bytes per rank against a 4 MB checkpoint. No construct
# judge/introspection.py refuses (no bytes literal either: the record is built from ints).
# 
# Expected: failed, "no barrier after the write". Observed: see README.md here.

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    else:
        with open(path, "wb") as handle:
            handle.write(bytes([80, 75, 5, 6]) + bytes(18))
