# expect: failed pitfall=best-weights-resumed
"""Keeps the latest weights in the checkpoint, but restores the model from "the best one"."""
import copy
import random

import numpy as np
import torch


def save_state(run):
    snap = {
        "latest": run.model.state_dict(),
        "best": run.best_state,
        "best_loss": run.best_loss,
        "optimizer": run.optimizer.state_dict(),
        "scheduler": run.scheduler.state_dict(),
        "scaler": run.scaler.state_dict(),
        "update": run.update, "epoch": run.epoch, "batch": run.batch,
        "rng": (torch.get_rng_state(), np.random.get_state(), random.getstate()),
    }
    return copy.deepcopy(snap)


def load_state(run, snap):
    weights = snap["best"] if snap["best"] is not None else snap["latest"]
    run.model.load_state_dict(copy.deepcopy(weights))
    run.optimizer.load_state_dict(snap["optimizer"])
    run.scheduler.load_state_dict(snap["scheduler"])
    run.scaler.load_state_dict(snap["scaler"])
    run.update, run.epoch, run.batch = snap["update"], snap["epoch"], snap["batch"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = snap["best_loss"], copy.deepcopy(snap["best"])
    torch.set_rng_state(snap["rng"][0])
    np.random.set_state(snap["rng"][1])
    random.setstate(snap["rng"][2])
