# expect: passed
# source: independent answer: a frozen dataclass checkpoint, tensors cloned one by one, the optimizer state copied with deepcopy, the sampler's epoch read from the sampler itself
import copy
import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch


@dataclass(frozen=True)
class Checkpoint:
    model: dict
    optimizer: dict
    scheduler: dict
    scaler: dict
    update: int
    epoch: int
    batch: int
    sampler_epoch: int
    best_loss: float
    best_state: Any
    rngs: tuple


def save_state(run):
    return Checkpoint(
        model={k: v.detach().clone() for k, v in run.model.state_dict().items()},
        optimizer=copy.deepcopy(run.optimizer.state_dict()),
        scheduler=dict(run.scheduler.state_dict()),
        scaler=dict(run.scaler.state_dict()),
        update=run.update, epoch=run.epoch, batch=run.batch, sampler_epoch=run.sampler.epoch,
        best_loss=run.best_loss,
        best_state=None if run.best_state is None else {k: v.clone() for k, v in run.best_state.items()},
        rngs=(torch.get_rng_state(), np.random.get_state(), random.getstate()),
    )


def load_state(run, ckpt):
    run.model.load_state_dict(ckpt.model)
    run.optimizer.load_state_dict(ckpt.optimizer)
    run.scheduler.load_state_dict(ckpt.scheduler)
    run.scaler.load_state_dict(ckpt.scaler)
    run.update, run.epoch, run.batch = ckpt.update, ckpt.epoch, ckpt.batch
    run.sampler.set_epoch(ckpt.sampler_epoch)
    run.best_loss = ckpt.best_loss
    run.best_state = None if ckpt.best_state is None else {k: v.clone() for k, v in ckpt.best_state.items()}
    torch.set_rng_state(ckpt.rngs[0])
    np.random.set_state(ckpt.rngs[1])
    random.setstate(ckpt.rngs[2])
