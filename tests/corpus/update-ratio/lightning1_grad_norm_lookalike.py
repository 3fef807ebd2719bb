# expect: failed pitfall=lightning-rounded-grad-norm
# source: look-alike of PyTorch Lightning 1.x LightningModule.grad_norm(norm_type): per-parameter norms as floats, the total as torch.tensor(all_norms).norm(norm_type), each rounded to 3 decimals, logged before clipping; the rest is the exercise's
import math

import torch
import torch.nn.functional as F


def grad_norm(named_parameters, norm_type=2.0):
    norm_type = float(norm_type)
    norms, all_norms = {}, []
    for name, p in named_parameters:
        if p.grad is None:
            continue
        param_norm = float(p.grad.data.norm(norm_type))
        norms[f"grad_{norm_type}_norm_{name}"] = round(param_norm, 3)
        all_norms.append(param_norm)
    total_norm = float(torch.tensor(all_norms).norm(norm_type))
    norms[f"grad_{norm_type}_norm_total"] = round(total_norm, 3)
    return norms


def log_step(model, batch, optimizer, max_norm, per="group"):
    x, y = batch
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    params = [p for g in optimizer.param_groups for p in g["params"]]
    logged = grad_norm([(str(i), p) for i, p in enumerate(params)])
    torch.nn.utils.clip_grad_norm_(params, max_norm)
    old = [p.detach().clone() for p in params]
    optimizer.step()
    d2 = [float((p.detach() - o).pow(2).sum()) for p, o in zip(params, old)]
    w2 = [float(o.pow(2).sum()) for o in old]
    if per == "parameter":
        ratios = [math.sqrt(a / b) for a, b in zip(d2, w2)]
    else:
        ratios, i = [], 0
        for g in optimizer.param_groups:
            n = len(g["params"])
            ratios.append(math.sqrt(sum(d2[i:i + n]) / sum(w2[i:i + n])))
            i += n
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]),
            "grad_norm": logged["grad_2.0_norm_total"], "update_ratios": ratios}
