# expect: failed pitfall=epoch-restarted
# source: look-alike of the Hugging Face Trainer resuming with ignore_data_skip=True (written for this corpus): global step, epoch, optimizer, scheduler, scaler and RNG come back, the batches already seen in the epoch are not skipped
import copy
import random

import numpy as np
import torch


def save_state(run):
    trainer_state = {"global_step": run.update, "epoch": run.epoch,
                     "best_metric": run.best_loss, "best_model": run.best_state}
    rng_state = {"python": random.getstate(), "numpy": np.random.get_state(), "cpu": torch.random.get_rng_state()}
    return copy.deepcopy({"trainer_state": trainer_state, "rng_state": rng_state,
                          "model": run.model.state_dict(), "optimizer": run.optimizer.state_dict(),
                          "scheduler": run.scheduler.state_dict(), "scaler": run.scaler.state_dict()})


def load_state(run, ckpt):
    ckpt = copy.deepcopy(ckpt)
    run.model.load_state_dict(ckpt["model"])
    run.optimizer.load_state_dict(ckpt["optimizer"])
    run.scheduler.load_state_dict(ckpt["scheduler"])
    run.scaler.load_state_dict(ckpt["scaler"])
    ts = ckpt["trainer_state"]
    run.update, run.epoch = ts["global_step"], ts["epoch"]
    run.best_loss, run.best_state = ts["best_metric"], ts["best_model"]
    # ignore_data_skip: start the epoch's dataloader afresh instead of skipping the batches seen
    run.batch = 0
    random.setstate(ckpt["rng_state"]["python"])
    np.random.set_state(ckpt["rng_state"]["numpy"])
    torch.random.set_rng_state(ckpt["rng_state"]["cpu"])
