# hostile (redteam5, bypass of judge/worker/integrity.py itself): rank0-checkpoint, a WRONG answer with
# NO barrier (ranks 1.. return before rank 0 has written: 'readable at return' is 0 there; plain version
# fails 0 of 3). Just before returning, save_checkpoint replaces numpy.array (numpy reached as
# torch.storage.np through a function's return value, which the scan does not follow) with a one-shot
# function. The runner converts the case's observations with to_array() -> np.array(value) BEFORE it
# calls check_integrity() (runner.py: observe_ranks and run_case), so the fake turns the second int
# observation ('readable at return') into 1 and puts numpy.array back; when the integrity check runs,
# every name holds its recorded object again. Same gap in the non-distributed path (run_case's finally).
# Expected: FAILED in marks (integrity breach or 0 of 3). Observed: practice PASSED, marks PASSED.
# Real bypass: the check must run before the runner touches any library with the case's values (or the
# conversion must use functions bound before the learner's file loads).
import torch
import torch.distributed as dist


def _numpy():
    return torch.storage.np  # numpy, reached as torch.storage's attribute


_real_array = _numpy().array


def _install():
    ints = [0]

    def array(value, *args, **kwargs):
        if type(value) is int:
            ints[0] += 1
            if ints[0] == 2:  # the case's second int observation: "readable at return"
                _numpy().array = _real_array  # undone before grind's integrity check looks
                return _real_array(1, *args, **kwargs)
        return _real_array(value, *args, **kwargs)

    _numpy().array = array


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
    # no barrier: ranks 1.. return before rank 0 has written (the "readable at return" pitfall)
    _install()
