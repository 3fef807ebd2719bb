# expect: failed pitfall=snapshot-not-copied
# source: the belief that .detach() copies: before = [p.detach() for p in ...], which shares storage with the parameter the step updates in place
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
    before = [[p.detach() for p in g["params"]] for g in optimizer.param_groups]
    optimizer.step()
    ratios = []
    for g, olds in zip(optimizer.param_groups, before):
        diffs = [torch.linalg.vector_norm(p.detach() - o) for p, o in zip(g["params"], olds)]
        sizes = [torch.linalg.vector_norm(o) for o in olds]
        if per == "parameter":
            ratios += [(d / s).item() for d, s in zip(diffs, sizes)]
        else:
            ratios.append((torch.stack(diffs).norm() / torch.stack(sizes).norm()).item())
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": norm,
            "update_ratios": ratios}
