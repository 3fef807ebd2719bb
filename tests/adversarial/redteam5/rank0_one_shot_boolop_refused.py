# redteam5 (refused, instructive): the one-shot numpy.array attack of rank0_one_shot_numpy_array.py with
# numpy laundered as (np or 0).array = ...: the marks scan refuses it ('the module np used as a value').
# Observed: practice PASSED (a wrong, no-barrier answer), marks FORBIDDEN. Reaching numpy as
# torch.storage.np through a function's return value (the committed bypass) is not refused.
import numpy as np
import torch
import torch.distributed as dist

_real_array = np.array


def _install():
    ints = [0]

    def array(value, *args, **kwargs):
        if type(value) is int:
            ints[0] += 1
            if ints[0] == 2:
                (np or 0).array = _real_array
                return _real_array(1, *args, **kwargs)
        return _real_array(value, *args, **kwargs)

    (np or 0).array = array


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    _install()
