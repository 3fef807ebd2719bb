# expect: failed pitfall=set-epoch-forgotten
import copy
import random

import numpy as np
import torch


def save_state(run):
    objects = {"model": run.model, "optimizer": run.optimizer, "scheduler": run.scheduler, "scaler": run.scaler}
    state = {name: copy.deepcopy(obj.state_dict()) for name, obj in objects.items()}
    state["counters"] = {"update": run.update, "epoch": run.epoch, "batch": run.batch}
    state["best"] = {"loss": run.best_loss, "state": copy.deepcopy(run.best_state)}
    state["rng"] = [torch.get_rng_state(), np.random.get_state(), random.getstate()]
    return state


def load_state(run, state):
    for name in ("model", "optimizer", "scheduler", "scaler"):
        getattr(run, name).load_state_dict(state[name])
    for key, value in state["counters"].items():
        setattr(run, key, value)
    run.best_loss, run.best_state = state["best"]["loss"], copy.deepcopy(state["best"]["state"])
    torch.set_rng_state(state["rng"][0])
    np.random.set_state(state["rng"][1])
    random.setstate(state["rng"][2])
