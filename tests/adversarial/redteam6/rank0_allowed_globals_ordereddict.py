# hostile (redteam6, bypass): rank0-checkpoint, the "wrapper" pitfall (torch.save(model.state_dict()):
# every key "module."-prefixed, a file a plain model refuses) that passes in marks mode.
# How: torch's weights_only unpickler resolves every default-allowed GLOBAL through the dict that
# torch._weights_only_unpickler._get_allowed_globals() returns - an lru_cache'd dict, the same object
# on every call, so a subscript store into it (plain data: no attribute write, nothing integrity.py
# records; the scan sees a call and a subscript) rebinds what "collections.OrderedDict" means to every
# later weights_only load in this process. The file itself is the ordinary wrapper state_dict (a fresh
# process loads it with weights_only=True and sees "module.body.weight"...). When checks.py's _read()
# loads it, the unpickler calls the learner's _ordered_dict for the top-level OrderedDict, fills it
# (SETITEMS), then calls _ordered_dict again for the dict's _metadata (BUILD state): that second call,
# learner code running inside the judge's torch.load, renames the first dict's keys in place.
# "bare keys" and "saved state" are then computed on the renamed dict.
# Expected: FAILED (0 of 3, like the plain prefixed save, which FAILED 0 of 3 in marks here).
# Observed (2026-12-03): practice PASSED, marks PASSED. Real bypass; contradicts README "What these two
# layers do not cover ... No review has found either changing what a check observes".
from collections import OrderedDict

import torch
import torch.distributed as dist

_made = []


def _ordered_dict(*args, **kwargs):
    made = OrderedDict(*args, **kwargs)
    for earlier in _made:
        for key in [k for k in earlier if type(k) is str and k.startswith("module.")]:
            earlier[key[len("module."):]] = earlier.pop(key)
    _made.append(made)
    return made


def save_checkpoint(model, path, local_rank):
    torch.serialization._weights_only_unpickler._get_allowed_globals()["collections.OrderedDict"] = _ordered_dict
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)  # the DDP wrapper's keys: "module.<key>"
    dist.barrier()
