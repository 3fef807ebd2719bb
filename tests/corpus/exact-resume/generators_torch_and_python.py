# expect: failed pitfall=numpy-rng-missing
# source: independent mistake: torch's and Python's generators saved as a pair (a pure-PyTorch habit, where random is used for shuffling); numpy's global generator, which draws the input noise, is never saved
import random

import torch


def _copy(tree):
    if torch.is_tensor(tree):
        return tree.clone()
    if isinstance(tree, dict):
        return {k: _copy(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_copy(v) for v in tree)
    return tree


def save_state(run):
    return {
        "model": _copy(run.model.state_dict()),
        "optimizer": _copy(run.optimizer.state_dict()),
        "scheduler": run.scheduler.state_dict(),
        "scaler": run.scaler.state_dict(),
        "counters": (run.update, run.epoch, run.batch),
        "best_loss": run.best_loss,
        "best_state": _copy(run.best_state),
        "rng": (torch.get_rng_state().clone(), random.getstate()),
    }


def load_state(run, state):
    run.model.load_state_dict(state["model"])
    run.optimizer.load_state_dict(_copy(state["optimizer"]))
    run.scheduler.load_state_dict(state["scheduler"])
    run.scaler.load_state_dict(state["scaler"])
    run.update, run.epoch, run.batch = state["counters"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = state["best_loss"], _copy(state["best_state"])
    torch_state, python_state = state["rng"]
    torch.set_rng_state(torch_state)
    random.setstate(python_state)
