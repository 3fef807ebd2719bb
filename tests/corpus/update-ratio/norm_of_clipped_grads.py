# expect: failed pitfall=grad-norm-after-clipping
# source: logging written after the clip line, reusing torch.nn.utils.get_total_norm on the clipped gradients
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
    logged = float(torch.nn.utils.get_total_norm([p.grad for p in params if p.grad is not None]))
    copies = {p: p.detach().clone() for p in params}
    optimizer.step()

    def r(ps):
        num = math.sqrt(sum(((p.detach() - copies[p]) ** 2).sum().item() for p in ps))
        return num / math.sqrt(sum((copies[p] ** 2).sum().item() for p in ps))

    ratios = [r([p]) for p in params] if per == "parameter" else [r(g["params"]) for g in optimizer.param_groups]
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": logged,
            "update_ratios": ratios}
