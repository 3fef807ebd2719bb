# expect: passed
# Everything by hand: the norm as the square root of summed squares, the clip without the 1e-6,
# snapshots in a dict keyed by parameter, per-parameter ratios grouped afterwards.
import math

import torch
import torch.nn.functional as F


def log_step(model, batch, optimizer, max_norm, per="group"):
    x, y = batch
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad = None
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    params = [p for g in optimizer.param_groups for p in g["params"]]
    total = math.sqrt(sum((p.grad ** 2).sum().item() for p in params if p.grad is not None))
    if total > max_norm:
        with torch.no_grad():
            for p in params:
                if p.grad is not None:
                    p.grad *= max_norm / total
    old = {id(p): p.detach().clone() for p in params}
    optimizer.step()
    moved = {id(p): ((p.detach() - old[id(p)]) ** 2).sum().item() for p in params}
    size = {id(p): (old[id(p)] ** 2).sum().item() for p in params}
    if per == "parameter":
        ratios = [math.sqrt(moved[id(p)] / size[id(p)]) for p in params]
    else:
        ratios = [math.sqrt(sum(moved[id(p)] for p in g["params"]) / sum(size[id(p)] for p in g["params"]))
                  for g in optimizer.param_groups]
    return {"loss": loss.item(), "uniform_loss": math.log(logits.size(1)), "grad_norm": total,
            "update_ratios": ratios}
