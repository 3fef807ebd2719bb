# expect: failed pitfall=log2-classes+grad-norm-after-clipping
# source: two slips together: the norm logged after the clip, and the uniform loss in bits
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
    torch.nn.utils.clip_grad_norm_(params, max_norm)
    norm = math.sqrt(sum(p.grad.pow(2).sum().item() for p in params if p.grad is not None))
    old = [p.detach().clone() for p in params]
    optimizer.step()
    if per == "parameter":
        ratios = [((p.detach() - o).norm() / o.norm()).item() for p, o in zip(params, old)]
    else:
        ratios, i = [], 0
        for g in optimizer.param_groups:
            n = len(g["params"])
            d = math.sqrt(sum(((p.detach() - o) ** 2).sum().item() for p, o in zip(params[i:i + n], old[i:i + n])))
            s = math.sqrt(sum((o ** 2).sum().item() for o in old[i:i + n]))
            ratios.append(d / s)
            i += n
    return {"loss": loss.item(), "uniform_loss": math.log2(logits.shape[-1]), "grad_norm": norm,
            "update_ratios": ratios}
