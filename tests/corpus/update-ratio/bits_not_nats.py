# expect: failed pitfall=log2-classes
# source: "entropy of a uniform distribution is log2 K bits", carried over from information theory to a loss measured in nats
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
    norm = torch.nn.utils.clip_grad_norm_(params, max_norm).item()
    keep = [p.detach().clone() for p in params]
    optimizer.step()
    moved = {id(p): float((p.detach() - k).pow(2).sum()) for p, k in zip(params, keep)}
    size = {id(p): float(k.pow(2).sum()) for p, k in zip(params, keep)}
    if per == "parameter":
        ratios = [math.sqrt(moved[id(p)] / size[id(p)]) for p in params]
    else:
        ratios = [math.sqrt(sum(moved[id(p)] for p in g["params"]) / sum(size[id(p)] for p in g["params"]))
                  for g in optimizer.param_groups]
    uniform = math.log(logits.shape[-1], 2)
    return {"loss": loss.item(), "uniform_loss": uniform, "grad_norm": norm, "update_ratios": ratios}
