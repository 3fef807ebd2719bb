# expect: failed pitfall=no-barrier
# exercise: rank0-checkpoint
# attack: no barrier; the ranks other than 0 say, before they return, that they have returned
# and that grind has looked (the checks' marker files: ranks/rank<r> "returned", done.rank<r>),
# so that rank 0's hold lets its write go early and it may finish before the child looks at the
# path for them. They still return without waiting for the file. A KNOWN HOLE (README, Security
# model; xfail in tests/test_kept.py): the hold rests on these files, so rank 0's write can win
# the race with the child's look at the liars' records. Measured: passed for marks 3 times in 3
# (the marked path after the return, the integrity check, reaches the child after rank 0's write),
# failed named no-barrier in practice 3 times in 3.
import os

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    rank = dist.get_rank()
    folder = os.path.dirname(path)
    if rank != 0:
        with open(os.path.join(folder, "ranks", f"rank{rank}"), "w") as handle:
            handle.write("returned")
        open(os.path.join(folder, f"done.rank{rank}"), "w").close()
    else:
        torch.save(model.module.state_dict(), path)
