# expect: failed pitfall=snapshot-not-copied
# The "before" copies are p.data: views of the same storage, moved by the in-place step.
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
    grad_norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
    before = {p: p.data for p in params}
    optimizer.step()
    def ratio(ps):
        up = math.sqrt(sum(float(((p.data - before[p]) ** 2).sum()) for p in ps))
        return up / math.sqrt(sum(float((before[p] ** 2).sum()) for p in ps))
    if per == "parameter":
        ratios = [ratio([p]) for p in params]
    else:
        ratios = [ratio(g["params"]) for g in optimizer.param_groups]
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": grad_norm,
            "update_ratios": ratios}
