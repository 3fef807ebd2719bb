# expect: passed
"""The checkpoint is the bytes a checkpoint file would hold: torch.save into an in-memory buffer
at save time (which copies everything then and there), torch.load at load time."""
import io
import random

import numpy as np
import torch


def save_state(run):
    buffer = io.BytesIO()
    torch.save({
        "model": run.model.state_dict(),
        "optim": run.optimizer.state_dict(),
        "sched": run.scheduler.state_dict(),
        "amp": run.scaler.state_dict(),
        "progress": (run.update, run.epoch, run.batch),
        "best": (run.best_loss, run.best_state),
        "rng": (torch.get_rng_state(), np.random.get_state(), random.getstate()),
    }, buffer)
    return buffer.getvalue()


def load_state(run, blob):
    ckpt = torch.load(io.BytesIO(blob), weights_only=False)
    run.model.load_state_dict(ckpt["model"])
    run.optimizer.load_state_dict(ckpt["optim"])
    run.scheduler.load_state_dict(ckpt["sched"])
    run.scaler.load_state_dict(ckpt["amp"])
    run.update, run.epoch, run.batch = ckpt["progress"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = ckpt["best"]
    torch_rng, np_rng, py_rng = ckpt["rng"]
    torch.set_rng_state(torch_rng)
    np.random.set_state(np_rng)
    random.setstate(py_rng)
