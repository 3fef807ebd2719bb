# expect: passed
# source: independent answer: snapshots as float64 numpy arrays, norms with np.linalg.norm over concatenated groups, the pre-clip norm measured by hand before clip_grad_norm_
import math

import numpy as np
import torch
import torch.nn.functional as F


def log_step(model, batch, optimizer, max_norm, per="group"):
    x, y = batch
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    groups = [g["params"] for g in optimizer.param_groups]
    flat_grads = [p.grad.detach().numpy().ravel() for g in groups for p in g if p.grad is not None]
    grad_norm = float(np.linalg.norm(np.concatenate(flat_grads)))
    torch.nn.utils.clip_grad_norm_([p for g in groups for p in g], max_norm)
    old = [[p.detach().numpy().copy() for p in g] for g in groups]
    optimizer.step()
    new = [[p.detach().numpy() for p in g] for g in groups]
    ratios = []
    for olds, news in zip(old, new):
        if per == "parameter":
            ratios.extend(float(np.linalg.norm(n - o) / np.linalg.norm(o)) for o, n in zip(olds, news))
        else:
            o = np.concatenate([a.ravel() for a in olds])
            n = np.concatenate([a.ravel() for a in news])
            ratios.append(float(np.linalg.norm(n - o) / np.linalg.norm(o)))
    return {"loss": float(loss), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": grad_norm,
            "update_ratios": ratios}
