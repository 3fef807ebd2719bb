# expect: failed pitfall=live-references
"""Looks complete, but the state_dicts go into the checkpoint as they are."""
import random

import numpy as np
import torch


def save_state(run):
    return dict(
        model=run.model.state_dict(),
        optimizer=run.optimizer.state_dict(),
        scheduler=run.scheduler.state_dict(),
        scaler=run.scaler.state_dict(),
        update=run.update, epoch=run.epoch, batch=run.batch,
        best_loss=run.best_loss, best_state=run.best_state,
        torch_rng=torch.get_rng_state(), numpy_rng=np.random.get_state(), python_rng=random.getstate(),
    )


def load_state(run, s):
    run.model.load_state_dict(s["model"])
    run.optimizer.load_state_dict(s["optimizer"])
    run.scheduler.load_state_dict(s["scheduler"])
    run.scaler.load_state_dict(s["scaler"])
    run.update, run.epoch, run.batch = s["update"], s["epoch"], s["batch"]
    run.sampler.set_epoch(s["epoch"])
    run.best_loss, run.best_state = s["best_loss"], s["best_state"]
    torch.set_rng_state(s["torch_rng"])
    np.random.set_state(s["numpy_rng"])
    random.setstate(s["python_rng"])
