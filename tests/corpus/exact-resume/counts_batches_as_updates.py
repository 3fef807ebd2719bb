# expect: failed
# source: independent mistake no pitfall describes: the update counter rebuilt from the data position (epoch * 3 + batch), which also counts the steps the scaler skipped
import copy
import random

import numpy as np
import torch


def save_state(run):
    return copy.deepcopy({
        "sd": [o.state_dict() for o in (run.model, run.optimizer, run.scheduler, run.scaler)],
        "pos": (run.epoch, run.batch), "best": (run.best_loss, run.best_state),
        "rng": (torch.get_rng_state(), np.random.get_state(), random.getstate()),
    })


def load_state(run, s):
    s = copy.deepcopy(s)
    for o, sd in zip((run.model, run.optimizer, run.scheduler, run.scaler), s["sd"]):
        o.load_state_dict(sd)
    run.epoch, run.batch = s["pos"]
    run.update = run.epoch * 3 + run.batch
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = s["best"]
    torch.set_rng_state(s["rng"][0])
    np.random.set_state(s["rng"][1])
    random.setstate(s["rng"][2])
