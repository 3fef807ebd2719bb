# expect: failed pitfall=makemore-update-to-data
# source: look-alike of the update:data ratio in Karpathy's makemore part 3 notebook, ((lr * p.grad).std() / p.data.std()).log10() after the update, per group's concatenated tensors here
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
    optimizer.step()
    ud = []
    for g in optimizer.param_groups:
        lr = g["lr"]
        pieces = [[p] for p in g["params"]] if per == "parameter" else [g["params"]]
        for piece in pieces:
            grad = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).flatten() for p in piece])
            data = torch.cat([p.data.flatten() for p in piece])
            ud.append(((lr * grad).std() / data.std()).log10().item())
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": norm,
            "update_ratios": ud}
