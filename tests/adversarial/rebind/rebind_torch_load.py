# expect: failed pitfall=no-barrier
# exercise: rank0-checkpoint
# hostile: rebinds torch's loading functions by plain assignment (a second red team's forgery, kept as found)
# Red team 2 (every level; aimed at marks: ``grind grade`` on a one-student class folder).
# 
# A wrong rank0-checkpoint answer: global rank 0 writes the bare state_dict, and NO barrier, so the
# other ranks return before the file exists. It forges "readable at return" without any construct
# judge/introspection.py refuses: a plain assignment ``torch.load = ...`` replaces the function
# the checks' ``_read`` looks up (``torch.load(path, weights_only=True)``) after the call returns,
# with one that answers the rank's own model's state_dict, so every rank "reads" a complete file.
# The witnessed count (one writer) and ``torch.save calls`` are right, so nothing else objects.
# 
# Expected: failed, "no barrier after the write". It passed 3/3 before "readable at return" was read
# with system calls bound before the learner's file loads; for marks the rebinding is refused outright.

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    state = {key: value.detach().clone() for key, value in model.module.state_dict().items()}

    def load(f, *args, **kwargs):
        return state

    torch.load = load
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
