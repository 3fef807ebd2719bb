# expect: failed pitfall=scaler-reset
# source: independent mistake: the GradScaler treated as self-calibrating ("it finds the right scale again by itself"), so only the rest is checkpointed; tensors copied with clone, not deepcopy
import random

import numpy as np
import torch


def _clone(tree):
    if torch.is_tensor(tree):
        return tree.clone()
    if isinstance(tree, dict):
        return {k: _clone(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_clone(v) for v in tree]
    return tree


def save_state(run):
    out = {"model": _clone(run.model.state_dict()), "opt": _clone(run.optimizer.state_dict()),
           "sched": run.scheduler.state_dict(), "pos": [run.update, run.epoch, run.batch],
           "best": [run.best_loss, _clone(run.best_state)]}
    out["rng"] = [torch.get_rng_state(), np.random.get_state(), random.getstate()]
    return out


def load_state(run, s):
    run.model.load_state_dict(s["model"])
    run.optimizer.load_state_dict(_clone(s["opt"]))
    run.scheduler.load_state_dict(s["sched"])
    run.update, run.epoch, run.batch = s["pos"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = s["best"][0], _clone(s["best"][1])
    torch.set_rng_state(s["rng"][0])
    np.random.set_state(s["rng"][1])
    random.setstate(s["rng"][2])
