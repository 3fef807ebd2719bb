# expect: failed pitfall=buffers-forgotten
# source: independent mistake: the weights copied from named_parameters() and written back with copy_ under no_grad; BatchNorm's running statistics are buffers, so they are never saved
import copy
import random

import numpy as np
import torch


def save_state(run):
    return {
        "weights": {n: p.detach().clone() for n, p in run.model.named_parameters()},
        "rest": copy.deepcopy({
            "optimizer": run.optimizer.state_dict(), "scheduler": run.scheduler.state_dict(),
            "scaler": run.scaler.state_dict(), "update": run.update, "epoch": run.epoch, "batch": run.batch,
            "best_loss": run.best_loss, "best_state": run.best_state,
        }),
        "rng": (torch.get_rng_state(), np.random.get_state(), random.getstate()),
    }


def load_state(run, state):
    with torch.no_grad():
        for n, p in run.model.named_parameters():
            p.copy_(state["weights"][n])
    rest = copy.deepcopy(state["rest"])
    run.optimizer.load_state_dict(rest["optimizer"])
    run.scheduler.load_state_dict(rest["scheduler"])
    run.scaler.load_state_dict(rest["scaler"])
    run.update, run.epoch, run.batch = rest["update"], rest["epoch"], rest["batch"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = rest["best_loss"], rest["best_state"]
    torch.set_rng_state(state["rng"][0])
    np.random.set_state(state["rng"][1])
    random.setstate(state["rng"][2])
