"""Oracle: a second derivation of the same resume, written without a list of what a run holds.

It walks every attribute of ``run`` generically: an object with ``state_dict()`` is saved through
it, any other object (the sampler) by its whole ``__dict__``, a number as it is; plus every
global generator. The lot goes through ``torch.save`` into an in-memory buffer, as a checkpoint
file would, and comes back with ``torch.load``. If the reference forgot a piece of the run, this
one would not, and the two would disagree on some case. (It runs in grind's trusted process
only, so loading a full pickle is fine here; never do that with a file you did not write.)
"""

import io
import random

import numpy as np
import torch


def save_state(run):
    pieces = {}
    for name, value in vars(run).items():
        if hasattr(value, "state_dict") and hasattr(value, "load_state_dict"):
            pieces[name] = ("state_dict", value.state_dict())
        elif hasattr(value, "__dict__") and not isinstance(value, dict):  # the sampler, not a state_dict copy
            pieces[name] = ("attributes", dict(vars(value)))
        else:
            pieces[name] = ("value", value)
    rng = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}
    buffer = io.BytesIO()
    torch.save({"pieces": pieces, "rng": rng}, buffer)
    return buffer.getvalue()


def load_state(run, state):
    saved = torch.load(io.BytesIO(state), weights_only=False)
    for name, (kind, value) in saved["pieces"].items():
        if kind == "state_dict":
            getattr(run, name).load_state_dict(value)
        elif kind == "attributes":
            vars(getattr(run, name)).update(value)
        else:
            setattr(run, name, value)
    torch.set_rng_state(saved["rng"]["torch"])
    np.random.set_state(saved["rng"]["numpy"])
    random.setstate(saved["rng"]["python"])
