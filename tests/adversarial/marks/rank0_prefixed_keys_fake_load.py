# hostile: a wrong rank0-checkpoint answer (it saves the DDP wrapper's state_dict, every key
# "module."-prefixed) that replaces torch.load through a module returned by a function, so that the
# judge's own read of the file sees bare keys. The marks scan does not follow a module through a
# return value; the marks integrity check sees torch.load replaced. Practice grades it (and passes:
# it only cheats the learner there); marks must refuse it.
import torch
import torch.distributed as dist


def _the_torch_module():
    return torch.serialization.torch


_real_load = torch.load


def _bare_keys_load(path, *args, **kwargs):
    state = _real_load(path, *args, **kwargs)
    if isinstance(state, dict):
        return {key.removeprefix("module."): value for key, value in state.items()}
    return state


_the_torch_module().load = _bare_keys_load


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
    dist.barrier()
