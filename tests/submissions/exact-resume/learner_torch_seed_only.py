# expect: failed pitfall=torch-rng-only
import copy

import torch


def save_state(run):
    return copy.deepcopy({
        "model": run.model.state_dict(), "optimizer": run.optimizer.state_dict(),
        "scheduler": run.scheduler.state_dict(), "scaler": run.scaler.state_dict(),
        "where": (run.update, run.epoch, run.batch), "best": (run.best_loss, run.best_state),
        "rng": torch.random.get_rng_state(),
    })


def load_state(run, state):
    state = copy.deepcopy(state)
    run.model.load_state_dict(state["model"])
    run.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    run.scaler.load_state_dict(state["scaler"])
    run.update, run.epoch, run.batch = state["where"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = state["best"]
    torch.random.set_rng_state(state["rng"])
