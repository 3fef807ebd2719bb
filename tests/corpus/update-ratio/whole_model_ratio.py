# expect: failed pitfall=whole-model-ratio
# source: parameters_to_vector over model.parameters(): one update ratio for the whole model, repeated for each group
import math

import torch
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector


def log_step(model, batch, optimizer, max_norm, per="group"):
    x, y = batch
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    params = [p for g in optimizer.param_groups for p in g["params"]]
    norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
    if per == "parameter":
        before = [p.detach().clone() for p in params]
        optimizer.step()
        ratios = [float((p.detach() - b).norm() / b.norm()) for p, b in zip(params, before)]
    else:
        before = parameters_to_vector(params).detach().clone()
        optimizer.step()
        after = parameters_to_vector(params).detach()
        whole = float((after - before).norm() / before.norm())
        ratios = [whole for _ in optimizer.param_groups]
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": norm,
            "update_ratios": ratios}
