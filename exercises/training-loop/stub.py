"""A complete training loop. Run `grind run training-loop` to check your answer."""

import copy  # noqa: F401  (you will probably want copy.deepcopy)
import math  # noqa: F401

import torch  # noqa: F401
from torch import nn  # noqa: F401


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    """Train `model` in place and return a copy of its weights at the best validation epoch.

    train, val:      (x, y) tensors, one example per row; walk train in order, no shuffling.
    make_optimizer:  make_optimizer(groups, lr) -> optimizer; call it once, with AdamW-style
                     groups [{"params": [...], "weight_decay": ...}, ...]. Biases and
                     normalization parameters get weight_decay 0.0, the rest weight_decay.
    loss_fn:         loss_fn(model(x), y) -> one loss per example, shape [n].
    micro_size:      examples per forward/backward (the last microbatch may be shorter).
    accumulation:    microbatches per update (the last group may be shorter); each update
                     applies the gradient of the group's mean loss, clipped to global norm
                     max_norm.
    lr, warmup, min_ratio: update u (from 0) runs at lr * ratio(u): a linear warmup over
                     `warmup` updates, then a cosine to min_ratio that the last update
                     reaches (the statement's schedule and its worked example).

    After each epoch: validation loss in eval mode, without gradients; keep a copy of the
    weights when it is strictly the best so far. Returns that copy, a dict like state_dict().
    """
    raise NotImplementedError("write fit")
