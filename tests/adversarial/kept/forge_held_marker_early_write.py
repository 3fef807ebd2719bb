# expect: failed pitfall=-
# exercise: rank0-checkpoint
# attack: no barrier; rank 0 makes the marker files a held save once made ("held", and a
# "held-<hex>" like the watcher's), serialises the state_dict in memory with torch.serialization's
# internals (so no held torch.save runs) and writes the file at once, hoping to finish before the
# child looks at the path for the other ranks, which return at once. The grant's time is the
# watcher's own note, not any file in the folder, and no grant came before this write: "written
# by a held torch.save" is 0 however the race goes.
import io
import os

import torch.distributed as dist
import torch.serialization as serialization


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() != 0:
        return
    folder = os.path.dirname(path)
    for name in ("held", "held-0123456789abcdef"):
        open(os.path.join(folder, name), "w").close()
    buffer = io.BytesIO()
    with serialization._open_zipfile_writer(buffer) as writer:
        serialization._save(model.module.state_dict(), writer, serialization.pickle, 2, False)
    with open(path, "wb") as handle:
        handle.write(buffer.getvalue())
