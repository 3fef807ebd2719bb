# expect: failed pitfall=set-epoch-forgotten
# source: look-alike of the Hugging Face Trainer before PR #8878 (written for this corpus): it skips to the right batch of the right epoch, but the sampler was never moved past epoch 0's shuffle
import copy
import random

import numpy as np
import torch


def save_state(run):
    return {
        "state_dicts": copy.deepcopy([m.state_dict() for m in (run.model, run.optimizer, run.scheduler, run.scaler)]),
        "epochs_trained": run.epoch,
        "steps_trained_in_current_epoch": run.batch,
        "global_step": run.update,
        "best": copy.deepcopy((run.best_loss, run.best_state)),
        "rng": (torch.get_rng_state(), np.random.get_state(), random.getstate()),
    }


def load_state(run, ckpt):
    for obj, sd in zip((run.model, run.optimizer, run.scheduler, run.scaler), copy.deepcopy(ckpt["state_dicts"])):
        obj.load_state_dict(sd)
    run.epoch = ckpt["epochs_trained"]
    run.batch = ckpt["steps_trained_in_current_epoch"]
    run.update = ckpt["global_step"]
    run.best_loss, run.best_state = copy.deepcopy(ckpt["best"])
    torch.set_rng_state(ckpt["rng"][0])
    np.random.set_state(ckpt["rng"][1])
    random.setstate(ckpt["rng"][2])
