# expect: passed
# source: independent answer: the checkpoint written with torch.save into an in-memory buffer (as it would go to disk) and read back with torch.load(weights_only=False); the sampler's epoch set from the loaded counters
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
        "counters": [run.update, run.epoch, run.batch],
        "best": [run.best_loss, run.best_state],
        "torch_rng": torch.get_rng_state(),
        "np_rng": np.random.get_state(),
        "py_rng": random.getstate(),
    }, buffer)
    return buffer.getvalue()


def load_state(run, blob):
    ckpt = torch.load(io.BytesIO(blob), weights_only=False)
    run.model.load_state_dict(ckpt["model"])
    run.optimizer.load_state_dict(ckpt["optim"])
    run.scheduler.load_state_dict(ckpt["sched"])
    run.scaler.load_state_dict(ckpt["amp"])
    run.update, run.epoch, run.batch = ckpt["counters"]
    run.sampler.set_epoch(run.epoch)
    run.best_loss, run.best_state = ckpt["best"]
    torch.set_rng_state(ckpt["torch_rng"])
    np.random.set_state(ckpt["np_rng"])
    random.setstate(ckpt["py_rng"])
