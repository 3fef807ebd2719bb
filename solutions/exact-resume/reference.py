"""Reference: everything a run needs to continue as if it had never stopped.

A checkpoint for an exact resume is not "the model": it is the whole training process at one
instant. Leave out any piece and the resumed run still trains, just not the same way.
"""

import copy
import random

import numpy as np
import torch


def save_state(run):
    state = {
        # Weights *and* buffers (BatchNorm's running statistics): state_dict() has both.
        "model": run.model.state_dict(),
        # AdamW's moments and per-parameter step counts, and each group's current lr.
        "optimizer": run.optimizer.state_dict(),
        # Where the schedule is (last_epoch): without it warmup starts over.
        "scheduler": run.scheduler.state_dict(),
        # The loss scale and the count of clean steps towards the next growth.
        "scaler": run.scaler.state_dict(),
        # The clocks: successful updates, and where the data order is inside the epoch.
        "update": run.update,
        "epoch": run.epoch,
        "batch": run.batch,
        # Best-validation tracking is part of the run too; it is *not* the resume point.
        "best_loss": run.best_loss,
        "best_state": run.best_state,
        # Every generator the loop draws from: dropout (torch), augmentation (numpy, Python).
        "rng": {
            "torch": torch.get_rng_state(),
            "numpy": np.random.get_state(),
            "python": random.getstate(),
        },
    }
    # The state stays in memory while training goes on, and state_dict() hands out the live
    # tensors (the weights, the moments): copy now, or the checkpoint changes under you.
    return copy.deepcopy(state)


def load_state(run, state):
    state = copy.deepcopy(state)  # the caller's checkpoint stays untouched (it could be loaded twice)
    # Restore into the objects the run already holds: the training loop keeps references to them.
    run.model.load_state_dict(state["model"])
    run.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    run.scaler.load_state_dict(state["scaler"])
    run.update = state["update"]
    run.epoch = state["epoch"]
    run.batch = state["batch"]
    # The loop calls set_epoch only when an epoch starts; resuming inside one, the sampler must
    # be told which epoch's order it is in, or it replays epoch 0's.
    run.sampler.set_epoch(state["epoch"])
    run.best_loss = state["best_loss"]
    run.best_state = state["best_state"]
    torch.set_rng_state(state["rng"]["torch"])
    np.random.set_state(state["rng"]["numpy"])
    random.setstate(state["rng"]["python"])
