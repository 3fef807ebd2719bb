# expect: failed pitfall=grad-norm-after-clipping
# Clips first, then logs the norm of what is left.
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
    grad_norm = torch.sqrt(sum((p.grad ** 2).sum() for p in params if p.grad is not None)).item()
    before = [[p.detach().clone() for p in g["params"]] for g in optimizer.param_groups]
    optimizer.step()
    ratios = []
    for g, olds in zip(optimizer.param_groups, before):
        pairs = list(zip(g["params"], olds))
        if per == "parameter":
            ratios += [((p.detach() - o).norm() / o.norm()).item() for p, o in pairs]
        else:
            moved = math.sqrt(sum(((p.detach() - o) ** 2).sum().item() for p, o in pairs))
            ratios.append(moved / math.sqrt(sum((o ** 2).sum().item() for _, o in pairs)))
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[1]), "grad_norm": grad_norm,
            "update_ratios": ratios}
