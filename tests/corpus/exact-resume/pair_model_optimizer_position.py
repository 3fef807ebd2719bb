# expect: failed pitfall=schedule-restarted+counter-reset
# source: independent pair: model, optimizer, scaler, data position, best record and generators saved, but neither the scheduler nor the update counter (both "follow from the epoch")
import copy
import random

import numpy as np
import torch


def save_state(run):
    return copy.deepcopy({
        "model": run.model.state_dict(), "optimizer": run.optimizer.state_dict(),
        "scaler": run.scaler.state_dict(), "epoch": run.epoch, "batch": run.batch,
        "best": (run.best_loss, run.best_state),
        "rng": (torch.get_rng_state(), np.random.get_state(), random.getstate()),
    })


def load_state(run, state):
    state = copy.deepcopy(state)
    run.model.load_state_dict(state["model"])
    run.optimizer.load_state_dict(state["optimizer"])
    run.scaler.load_state_dict(state["scaler"])
    run.epoch, run.batch = state["epoch"], state["batch"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = state["best"]
    torch.set_rng_state(state["rng"][0])
    np.random.set_state(state["rng"][1])
    random.setstate(state["rng"][2])
