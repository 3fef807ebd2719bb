"""Oracle for update-ratio: the same numbers through other torch routes, written independently of
the reference.

- the uniform-loss reference is not a formula: it is torch's own cross_entropy of all-zero logits
  (every class equally likely), which is what "the loss of a uniform guess" means;
- the gradient norm comes from torch.nn.utils.get_total_norm and the clip from
  clip_grads_with_norm_ (the two halves of clip_grad_norm_), over every gradient of the optimizer;
- each group (or parameter) is snapshotted as one flat vector with parameters_to_vector, and the
  movement is torch.dist between the vectors after and before the step."""

import torch
import torch.nn.functional as F
from torch.nn.utils import clip_grads_with_norm_, get_total_norm, parameters_to_vector


def log_step(model, batch, optimizer, max_norm, per="group"):
    inputs, labels = batch
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad = None
    logits = model(inputs)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    with torch.no_grad():
        uniform = F.cross_entropy(torch.zeros(1, logits.shape[-1], dtype=torch.float64),
                                  torch.zeros(1, dtype=torch.long))

    params = [p for group in optimizer.param_groups for p in group["params"]]
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, 2.0)
    clip_grads_with_norm_(params, max_norm, total)

    if per == "parameter":
        pieces = [[p] for p in params]
    else:
        pieces = [list(group["params"]) for group in optimizer.param_groups]
    with torch.no_grad():
        before = [parameters_to_vector(piece).clone() for piece in pieces]
    optimizer.step()
    with torch.no_grad():
        ratios = [float(torch.dist(parameters_to_vector(piece), old) / old.norm())
                  for piece, old in zip(pieces, before)]
    return {"loss": float(loss.detach()), "uniform_loss": float(uniform), "grad_norm": float(total),
            "update_ratios": ratios}
