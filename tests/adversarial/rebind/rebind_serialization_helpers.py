# expect: failed pitfall=no-barrier
# exercise: rank0-checkpoint
# hostile: rebinds torch's loading functions by plain assignment (a second red team's forgery, kept as found)
# Red team 2 (marks, every level): the same wrong rank0-checkpoint answer as
# rank0_forge_torch_load.py (no barrier), forging "readable at return" while leaving torch.load
# itself untouched, so that a fix that only binds torch.load early in checks.py is not enough:
# torch.load looks its helpers up in torch.serialization's module namespace at every call, and a
# plain assignment replaces them (torch 2.x internals: _open_file_like, _is_zipfile,
# _open_zipfile_reader, _is_torchscript_zip, _load). No construct judge/introspection.py refuses.

import contextlib
import io

import torch
import torch.distributed as dist
import torch.serialization as serialization


def save_checkpoint(model, path, local_rank):
    state = {key: value.detach().clone() for key, value in model.module.state_dict().items()}
    serialization._open_file_like = lambda f, mode: contextlib.nullcontext(io.BytesIO())
    serialization._is_zipfile = lambda f: True
    serialization._open_zipfile_reader = lambda f: contextlib.nullcontext(f)
    serialization._is_torchscript_zip = lambda f: False
    serialization._load = lambda *args, **kwargs: state
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
