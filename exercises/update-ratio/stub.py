"""Logging a training step. Run `grind run update-ratio` to check your answer."""

import math  # noqa: F401

import torch  # noqa: F401
import torch.nn.functional as F  # noqa: F401


def log_step(model, batch, optimizer, max_norm, per="group"):
    """Take one real training step and return what a debugging playbook logs about it.

    model:     a classifier: model(x) gives logits of shape [batch, K].
    batch:     (x, y), y holding class indices; the loss is F.cross_entropy(model(x), y).
    optimizer: a torch optimizer over the model's parameters, with one or more param groups.
    max_norm:  clip the gradients to this global 2-norm (like clip_grad_norm_) before stepping.
    per:       "group": one update ratio per param group; "parameter": one per parameter,
               in param_groups order.

    Returns {"loss": the batch's loss before the step, "uniform_loss": ln K,
             "grad_norm": the global gradient norm before clipping,
             "update_ratios": [||theta_after - theta_before|| / ||theta_before||, ...]}.
    """
    raise NotImplementedError("write log_step")
