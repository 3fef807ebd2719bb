# expect: failed pitfall=ratio-over-new-weights
# source: "relative change" taken against the current value, |new - old| / |new|, as a percent-change helper would
import math

import torch
import torch.nn.functional as F


def relative_change(old, new):
    return float(torch.linalg.vector_norm(new - old) / torch.linalg.vector_norm(new))


def log_step(model, batch, optimizer, max_norm, per="group"):
    x, y = batch
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    params = [p for g in optimizer.param_groups for p in g["params"]]
    norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
    pieces = [[p] for p in params] if per == "parameter" else [g["params"] for g in optimizer.param_groups]
    old = [torch.cat([p.detach().reshape(-1) for p in piece]).clone() for piece in pieces]
    optimizer.step()
    new = [torch.cat([p.detach().reshape(-1) for p in piece]) for piece in pieces]
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": norm,
            "update_ratios": [relative_change(o, n) for o, n in zip(old, new)]}
