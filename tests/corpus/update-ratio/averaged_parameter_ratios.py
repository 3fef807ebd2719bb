# expect: failed pitfall=mean-of-parameter-ratios
# source: per-parameter ratios (as per-parameter loggers report them) averaged with statistics.mean to get a group's number
import math
import statistics

import torch
import torch.nn.functional as F


def log_step(model, batch, optimizer, max_norm, per="group"):
    x, y = batch
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    params = [p for g in optimizer.param_groups for p in g["params"]]
    norm = torch.nn.utils.clip_grad_norm_(params, max_norm).item()
    saved = [[p.detach().clone() for p in g["params"]] for g in optimizer.param_groups]
    optimizer.step()
    per_param = [[((p.detach() - s).norm() / s.norm()).item() for p, s in zip(g["params"], ss)]
                 for g, ss in zip(optimizer.param_groups, saved)]
    if per == "parameter":
        ratios = [r for group in per_param for r in group]
    else:
        ratios = [statistics.mean(group) for group in per_param]
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": norm,
            "update_ratios": ratios}
