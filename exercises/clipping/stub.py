"""Gradient clipping by global norm. Run `grind run clipping` to check your answer."""

import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    """Scale the gradients of `parameters` in place so that their global norm is at most `max_norm`.

    parameters: a tensor or an iterable of tensors; tensors whose .grad is None are skipped.
    max_norm:   the largest global norm allowed after clipping.
    norm_type:  p of the p-norm; float("inf") means the largest absolute entry.

    Returns the global norm of the gradients measured before clipping.
    """
    raise NotImplementedError("write clip_grad_norm_")
