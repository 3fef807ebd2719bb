"""Reference: one training step that also measures the numbers the debugging playbook logs.

Three things a training run should print from its first step on: the loss next to what an
untrained classifier should score (ln K for K classes when its guesses are uniform), the size of
the raw gradient before clipping hides it, and how far the step actually moved each group of
parameters compared with their size."""

import math

import torch
import torch.nn.functional as F


def log_step(model, batch, optimizer, max_norm, per="group"):
    x, y = batch
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()

    groups = [list(group["params"]) for group in optimizer.param_groups]
    params = [p for group in groups for p in group]
    # clip_grad_norm_ returns the global norm measured *before* it scales anything: that is the
    # number to log (after clipping it would read max_norm whenever clipping is active).
    grad_norm = torch.nn.utils.clip_grad_norm_(params, max_norm)

    # Copies, not views: optimizer.step() updates the parameters in place.
    before = [p.detach().clone() for p in params]
    optimizer.step()

    # One (||delta||^2, ||theta||^2) pair per parameter, from the real step.
    squares = [((p.detach() - b).pow(2).sum().item(), b.pow(2).sum().item()) for p, b in zip(params, before)]
    if per == "parameter":
        ratios = [math.sqrt(d) / math.sqrt(t) for d, t in squares]
    else:
        # Per group, each group's parameters taken together as one vector: norms of the pieces
        # combine as the square root of the sum of their squares.
        ratios, start = [], 0
        for group in groups:
            piece = squares[start:start + len(group)]
            start += len(group)
            ratios.append(math.sqrt(sum(d for d, _ in piece)) / math.sqrt(sum(t for _, t in piece)))

    return {
        "loss": loss.item(),
        # Uniform logits give probability 1/K to the right class: cross-entropy -ln(1/K) = ln K,
        # natural log (cross_entropy uses it), K from the logits, not from the labels in the batch.
        "uniform_loss": math.log(logits.shape[-1]),
        "grad_norm": float(grad_norm),
        "update_ratios": ratios,
    }
