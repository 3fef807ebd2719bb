# expect: failed pitfall=log2-classes
# Entropy in bits: log2 K for the uniform guess.
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
    snap = [p.detach().clone() for p in params]
    optimizer.step()
    d2 = [float((p.detach() - s).pow(2).sum()) for p, s in zip(params, snap)]
    t2 = [float(s.pow(2).sum()) for s in snap]
    if per == "parameter":
        ratios = [math.sqrt(a / b) for a, b in zip(d2, t2)]
    else:
        ratios, i = [], 0
        for g in optimizer.param_groups:
            n = len(g["params"])
            ratios.append(math.sqrt(sum(d2[i:i + n]) / sum(t2[i:i + n])))
            i += n
    return {"loss": loss.item(), "uniform_loss": math.log2(logits.shape[-1]), "grad_norm": grad_norm,
            "update_ratios": ratios}
