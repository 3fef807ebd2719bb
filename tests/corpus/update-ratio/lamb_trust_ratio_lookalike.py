# expect: failed pitfall=lamb-trust-ratio
# source: look-alike of the LAMB trust ratio (timm.optim.Lamb, apex FusedLAMB: w_norm / update_norm), applied to the step that was taken
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
    pieces = [[p] for p in params] if per == "parameter" else [list(g["params"]) for g in optimizer.param_groups]
    w = [torch.cat([p.detach().flatten() for p in piece]).clone() for piece in pieces]
    optimizer.step()
    trust = []
    for piece, w0 in zip(pieces, w):
        update = torch.cat([p.detach().flatten() for p in piece]) - w0
        w_norm, update_norm = w0.norm(2), update.norm(2)
        trust.append(float(w_norm / update_norm))
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": norm,
            "update_ratios": trust}
