# hostile (redteam5, bypass): rank0-checkpoint, a WRONG answer that passes in marks mode.
# It saves the DDP wrapper's state_dict (every key "module."-prefixed, the "bare keys" pitfall) and
# then sets an *instance* attribute on the bare model, model.module.state_dict, to return that same
# prefixed dict. checks.py computes the expected keys/values with net.state_dict() on that very
# object (net is ddp.module), after the learner's call, so "bare keys" compares the file with the
# learner's own dict and "saved state" walks it in the same order. No module or class namespace
# changes (the integrity check only records modules and library classes, not instances) and the
# marks scan leaves an object's own attributes free.
# Expected: FAILED in practice and marks (tests/adversarial: plain prefixed save fails 0 of 3).
# Observed (2026-12-03): practice PASSED, marks PASSED -> real bypass.
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    wrapped = model.state_dict()  # every key "module."-prefixed: the wrong file
    model.module.state_dict = lambda *a, **k: wrapped
    if dist.get_rank() == 0:
        torch.save(wrapped, path)
    dist.barrier()
