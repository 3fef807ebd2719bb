# hostile (redteam5, bypass): rank0-checkpoint, a WRONG answer (saves the DDP wrapper's state_dict,
# every key "module."-prefixed) that passes in marks mode with one public torch API and no attribute
# store at all: it registers a state_dict post-hook on the bare model (model.module), which renames the
# keys to "module.<key>" when the bare model is asked on its own (prefix ""). checks.py computes the
# expected keys with net.state_dict() on that same object after the call, so 'bare keys' and 'saved
# state' compare the file with the learner's own renaming. The hook lives in the instance's
# _state_dict_hooks (data), which neither the marks scan nor integrity.py looks at.
# Expected: FAILED (0 of 3, like the plain prefixed save). Observed: practice PASSED, marks PASSED.
# Real bypass.
import torch
import torch.distributed as dist


def _wrapper_keys(module, state_dict, prefix, local_metadata):
    if prefix == "":  # the bare model asked on its own (not through the DDP wrapper)
        for key in list(state_dict):
            state_dict["module." + key] = state_dict.pop(key)


def save_checkpoint(model, path, local_rank):
    model.module.register_state_dict_post_hook(_wrapper_keys)
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)  # every key "module."-prefixed: the wrong file
    dist.barrier()
