# expect: failed pitfall=predicted-update
# source: the SGD picture of an update, delta = lr * grad, computed from each group's lr before stepping (no snapshot at all)
import math

import torch
import torch.nn.functional as F


def log_step(model, batch, optimizer, max_norm, per="group"):
    x, y = batch
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    params = [p for g in optimizer.param_groups for p in g["params"]]
    norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
    ratios = []
    for g in optimizer.param_groups:
        lr = g["lr"]
        ups = [lr * (p.grad.norm() if p.grad is not None else torch.tensor(0.0)) for p in g["params"]]
        ws = [p.detach().norm() for p in g["params"]]
        if per == "parameter":
            ratios += [float(u / w) for u, w in zip(ups, ws)]
        else:
            ratios.append(float(torch.stack(ups).norm() / torch.stack(ws).norm()))
    optimizer.step()
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": norm,
            "update_ratios": ratios}
