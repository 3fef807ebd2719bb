# expect: failed pitfall=no-barrier
# exercise: rank0-checkpoint
# attack: no barrier; the ranks other than 0 say, before they return, that they have returned
# and that grind has looked (the marker files an earlier version of the checks' hold read:
# ranks/rank<r> "returned", done.rank<r>), so that rank 0's hold would let its write go early and
# it might finish before the child looks at the path for them. They still return without
# waiting for the file. Closed (issue 28): the hold is the watcher's now (ranks.hold_save), which
# reads no file a rank can write, so rank 0 writes only after every rank's look. Measured before:
# passed for marks 3 times in 3.
import os

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    rank = dist.get_rank()
    folder = os.path.dirname(path)
    if rank != 0:
        os.makedirs(os.path.join(folder, "ranks"), exist_ok=True)
        with open(os.path.join(folder, "ranks", f"rank{rank}"), "w") as handle:
            handle.write("returned")
        open(os.path.join(folder, f"done.rank{rank}"), "w").close()
    else:
        torch.save(model.module.state_dict(), path)
