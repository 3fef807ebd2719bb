# expect: failed pitfall=best-forgotten
# source: independent mistake: "the best model has its own checkpoint", so the resume state leaves best_loss and best_state out and the record starts again
import copy
import random

import numpy as np
import torch


def save_state(run):
    s = {k: getattr(run, k).state_dict() for k in ("model", "optimizer", "scheduler", "scaler")}
    s.update(update=run.update, epoch=run.epoch, batch=run.batch)
    s["rng"] = {"torch": torch.get_rng_state(), "np": np.random.get_state(), "py": random.getstate()}
    return copy.deepcopy(s)


def load_state(run, s):
    s = copy.deepcopy(s)
    for k in ("model", "optimizer", "scheduler", "scaler"):
        getattr(run, k).load_state_dict(s[k])
    run.update, run.epoch, run.batch = s["update"], s["epoch"], s["batch"]
    run.sampler.set_epoch(s["epoch"])
    torch.set_rng_state(s["rng"]["torch"])
    np.random.set_state(s["rng"]["np"])
    random.setstate(s["rng"]["py"])
