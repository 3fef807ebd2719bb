# expect: failed pitfall=classes-from-labels
# source: K = len(set(labels)) taken from the batch instead of from the model's outputs
import math

import torch
import torch.nn.functional as F


def log_step(model, batch, optimizer, max_norm, per="group"):
    x, y = batch
    num_classes = len(set(y.tolist()))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    params = [p for g in optimizer.param_groups for p in g["params"]]
    norm = torch.nn.utils.clip_grad_norm_(params, max_norm).item()
    keep = [p.detach().clone() for p in params]
    optimizer.step()
    if per == "parameter":
        ratios = [((p.detach() - k).norm() / k.norm()).item() for p, k in zip(params, keep)]
    else:
        ratios, i = [], 0
        for g in optimizer.param_groups:
            n = len(g["params"])
            pairs = list(zip(params[i:i + n], keep[i:i + n]))
            i += n
            up = math.sqrt(sum(((p.detach() - k) ** 2).sum().item() for p, k in pairs))
            ratios.append(up / math.sqrt(sum((k ** 2).sum().item() for _, k in pairs)))
    return {"loss": loss.item(), "uniform_loss": math.log(num_classes), "grad_norm": norm, "update_ratios": ratios}
