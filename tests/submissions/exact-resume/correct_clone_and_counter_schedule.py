# expect: passed
"""No deepcopy: tensors cloned by a small recursive helper. The schedule is not saved at all: it
is put back at the update counter (LambdaLR's last_epoch counts the scheduler.step() calls,
one per update), and the current lr comes back with the optimizer's state_dict."""
import math
import random

import numpy as np
import torch


def _snapshot(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, dict):
        return type(obj)((k, _snapshot(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(_snapshot(v) for v in obj)
    return obj


def save_state(run):
    return [
        _snapshot(run.model.state_dict()),
        _snapshot(run.optimizer.state_dict()),
        dict(run.scaler.state_dict()),
        run.update, run.epoch, run.batch,
        run.best_loss, _snapshot(run.best_state),
        torch.get_rng_state(), np.random.get_state(), random.getstate(),
    ]


def load_state(run, saved):
    (model, optim, scaler, update, epoch, batch, best_loss, best_state,
     torch_rng, numpy_rng, python_rng) = saved
    run.model.load_state_dict(model)
    run.optimizer.load_state_dict(optim)
    run.scheduler.last_epoch = update
    run.scaler.load_state_dict(scaler)
    run.update, run.epoch, run.batch = update, epoch, batch
    run.sampler.set_epoch(epoch)
    run.best_loss = best_loss if best_loss is not None else math.inf
    run.best_state = _snapshot(best_state)
    torch.set_rng_state(torch_rng)
    np.random.set_state(numpy_rng)
    random.setstate(python_rng)
