# expect: failed
# source: near miss, no known mistake: everything restored except the generators, which are re-seeded from the update counter (seed_everything(base + step), a common "deterministic resume" recipe); they are not where the run left them, and not where a fresh script leaves them either, so rng-not-restored must not be named
import copy
import random

import numpy as np
import torch


def save_state(run):
    return copy.deepcopy({"m": run.model.state_dict(), "o": run.optimizer.state_dict(),
                          "s": run.scheduler.state_dict(), "a": run.scaler.state_dict(),
                          "n": (run.update, run.epoch, run.batch), "b": (run.best_loss, run.best_state)})


def load_state(run, st):
    run.model.load_state_dict(st["m"])
    run.optimizer.load_state_dict(st["o"])
    run.scheduler.load_state_dict(st["s"])
    run.scaler.load_state_dict(st["a"])
    run.update, run.epoch, run.batch = st["n"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = st["b"][0], copy.deepcopy(st["b"][1])
    seed = 1234 + run.update
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
