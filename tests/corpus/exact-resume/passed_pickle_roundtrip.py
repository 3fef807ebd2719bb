# expect: passed
# source: independent answer: the whole state pickled to bytes at save time (pickling copies every tensor), unpickled at load time; generators through torch.random's aliases
import pickle
import random

import numpy as np
import torch


def save_state(run):
    payload = {
        "modules": {name: getattr(run, name).state_dict()
                    for name in ("model", "optimizer", "scheduler", "scaler")},
        "ints": {name: getattr(run, name) for name in ("update", "epoch", "batch")},
        "best": {"best_loss": run.best_loss, "best_state": run.best_state},
        "generators": (torch.random.get_rng_state(), np.random.get_state(), random.getstate()),
    }
    return pickle.dumps(payload)


def load_state(run, data):
    payload = pickle.loads(data)
    for name, sd in payload["modules"].items():
        getattr(run, name).load_state_dict(sd)
    for name, value in payload["ints"].items():
        setattr(run, name, value)
    run.sampler.set_epoch(payload["ints"]["epoch"])
    for name, value in payload["best"].items():
        setattr(run, name, value)
    t, n, p = payload["generators"]
    torch.random.set_rng_state(t)
    np.random.set_state(n)
    random.setstate(p)
