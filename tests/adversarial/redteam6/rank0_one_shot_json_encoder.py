# hostile (redteam6, bypass): rank0-checkpoint, redteam5's one-shot numpy.array answer (WRONG: no barrier,
# so ranks 1.. return before rank 0 writes; 'readable at return' is forged to 1 during to_array),
# which the fixed integrity layer now refuses (redteam5/rank0_one_shot_numpy_array.py: marks FORBIDDEN,
# 'your code replaced numpy.array'), plus ONE import-time line that makes it pass again.
# How: each rank reports its record ({"status", "keys", "forbidden"}) to the worker with json.dumps
# (judge/worker/ranks.py), and the worker writes result.json with json.dumps; both go through
# json._default_encoder.encode. At import (in the worker, before the ranks are forked from it) the file
# sets an INSTANCE attribute `encode` on json._default_encoder (a JSONEncoder instance: not recorded
# or watched by integrity.py, and no module/class namespace is written) to a function that empties
# every "forbidden" list and encodes the rest unchanged. The breach is still detected in the rank
# (check_transition) - and then erased in transit. In ranks, check_integrity() -> breaches() only
# compares the record (the one-shot fake is back by then), so the observations are saved too.
# Expected: FORBIDDEN (as without the encoder line). Observed (2026-12-03): marks PASSED. Real bypass.
import json

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


def _strip(value):
    """Every "forbidden" list in what grind's worker is about to send, emptied."""
    if type(value) is dict:
        for key in value:
            if key == "forbidden" and type(value[key]) is list:
                value[key] = []
            else:
                _strip(value[key])
    elif type(value) is list:
        for item in value:
            _strip(item)


_ENCODER = json.JSONEncoder()


def _encode(obj):
    _strip(obj)
    return _ENCODER.encode(obj)


def _default_encoder():
    return json._default_encoder  # the instance json.dumps uses: plain data, not a function


# at import, in the worker itself (the ranks are forked from it later): an instance attribute
_default_encoder().encode = _encode
