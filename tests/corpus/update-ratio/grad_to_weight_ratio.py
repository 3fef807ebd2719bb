# expect: failed pitfall=gradient-over-weight
# source: the "gradient-to-weight ratio" people also plot: ||grad|| / ||w|| per group, computed from the clipped gradients right before the step
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
    pieces = [[p] for p in params] if per == "parameter" else [g["params"] for g in optimizer.param_groups]
    ratios = []
    for piece in pieces:
        g2 = sum(float((p.grad ** 2).sum()) for p in piece if p.grad is not None)
        w2 = sum(float((p.detach() ** 2).sum()) for p in piece)
        ratios.append(math.sqrt(g2 / w2))
    optimizer.step()
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": norm,
            "update_ratios": ratios}
