# expect: passed
# source: independent answer: torch._foreach_norm for the per-tensor norms, the clip written out with torch._foreach_mul_ and torch's 1e-6, group ratios from squared norms
import math

import torch
import torch.nn.functional as F


def log_step(model, batch, optimizer, max_norm, per="group"):
    x, y = batch
    optimizer.zero_grad(set_to_none=True)
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    with_grad = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(with_grad)))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    torch._foreach_mul_(with_grad, coef)
    sizes = [[p.detach().clone() for p in g["params"]] for g in optimizer.param_groups]
    optimizer.step()
    ratios = []
    for g, olds in zip(optimizer.param_groups, sizes):
        moves = torch._foreach_norm([p.detach() - o for p, o in zip(g["params"], olds)])
        norms = torch._foreach_norm(olds)
        if per == "parameter":
            ratios += [float(m / n) for m, n in zip(moves, norms)]
        else:
            ratios.append(math.sqrt(sum(float(m) ** 2 for m in moves) / sum(float(n) ** 2 for n in norms)))
    return {"loss": loss.item(), "uniform_loss": math.log(logits.shape[-1]), "grad_norm": float(total),
            "update_ratios": ratios}
