# expect: failed (practice and marks): the kept file is not a state_dict ("loads with weights_only": 0)
# exercise: rank0-checkpoint
# hostile (grind's reader): rank 0 writes, at the kept path, a torch.save-shaped zip whose
# storages are deflated: each inflates to 64 MB of zeros (the per-storage cap), 65 kB apiece on
# disk. Before the fix grind's own process held every storage at once after the run (24 here:
# 1.5 GB; a thousand fit under the file cap: 64 GB), outside every limit of the run. Now the
# storages share one 64 MB cap and the file reads as "not a state_dict". Keep COUNT small: on a
# grind without the fix this is COUNT x 64 MB in the grader.
import io
import zipfile

import torch
import torch.distributed as dist

COUNT = 24


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        saved = io.BytesIO()
        torch.save({f"k{i}": torch.zeros(1) for i in range(COUNT)}, saved)
        with zipfile.ZipFile(io.BytesIO(saved.getvalue())) as src, zipfile.ZipFile(path, "w") as dst:
            for info in src.infolist():
                if "/data/" in info.filename:
                    dst.writestr(info.filename, bytes(64 << 20), compress_type=zipfile.ZIP_DEFLATED)
                else:
                    dst.writestr(info.filename, src.read(info))
    dist.barrier()
