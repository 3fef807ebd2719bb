# expect: failed pitfall=growth-tracker-reset
# source: independent mistake: "the scaler is just its scale": scaler.get_scale() saved as a float and put back into the fresh scaler's state_dict, whose clean-step count is still 0
import copy
import random

import numpy as np
import torch


def save_state(run):
    snap = {
        "weights": run.model.state_dict(),
        "adamw": run.optimizer.state_dict(),
        "lambda": run.scheduler.state_dict(),
        "loss_scale": float(run.scaler.get_scale()),
        "where": (run.update, run.epoch, run.batch),
        "best": (run.best_loss, run.best_state),
        "rngs": (torch.get_rng_state(), np.random.get_state(), random.getstate()),
    }
    return copy.deepcopy(snap)


def load_state(run, snap):
    run.model.load_state_dict(snap["weights"])
    run.optimizer.load_state_dict(snap["adamw"])
    run.scheduler.load_state_dict(snap["lambda"])
    sd = run.scaler.state_dict()
    sd["scale"] = snap["loss_scale"]
    run.scaler.load_state_dict(sd)
    run.update, run.epoch, run.batch = snap["where"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = snap["best"][0], copy.deepcopy(snap["best"][1])
    t, n, p = snap["rngs"]
    torch.set_rng_state(t)
    np.random.set_state(n)
    random.setstate(p)
