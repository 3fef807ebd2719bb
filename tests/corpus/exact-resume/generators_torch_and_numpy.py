# expect: failed pitfall=python-rng-missing
# source: independent mistake: a "capture the RNGs" helper written for a torch + numpy stack (the pair most seed_everything snippets start from); Python's random module, used by the augmentation, is left out
import copy

import numpy as np
import torch


def _generators():
    return {"torch": torch.get_rng_state(), "numpy": np.random.get_state()}


def _restore_generators(saved):
    torch.set_rng_state(saved["torch"])
    np.random.set_state(saved["numpy"])


def save_state(run):
    snapshot = {
        "weights": run.model.state_dict(),
        "optim": run.optimizer.state_dict(),
        "lr_sched": run.scheduler.state_dict(),
        "amp": run.scaler.state_dict(),
        "where": {"update": run.update, "epoch": run.epoch, "batch": run.batch},
        "best": (run.best_loss, run.best_state),
        "generators": _generators(),
    }
    return copy.deepcopy(snapshot)


def load_state(run, snapshot):
    snapshot = copy.deepcopy(snapshot)
    run.model.load_state_dict(snapshot["weights"])
    run.optimizer.load_state_dict(snapshot["optim"])
    run.scheduler.load_state_dict(snapshot["lr_sched"])
    run.scaler.load_state_dict(snapshot["amp"])
    run.update = snapshot["where"]["update"]
    run.epoch = snapshot["where"]["epoch"]
    run.batch = snapshot["where"]["batch"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = snapshot["best"]
    _restore_generators(snapshot["generators"])
