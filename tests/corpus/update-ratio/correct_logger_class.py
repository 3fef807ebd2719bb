# expect: passed
# source: independent answer: a reusable StepLogger object (as one would attach to a trainer), norms via torch.norm of stacked per-tensor norms, the uniform loss as -log(1/K)
import math

import torch
from torch.nn import functional as F


class StepLogger:
    def __init__(self, optimizer, per):
        self.optimizer, self.per = optimizer, per

    def pieces(self):
        if self.per == "parameter":
            return [[p] for g in self.optimizer.param_groups for p in g["params"]]
        return [list(g["params"]) for g in self.optimizer.param_groups]

    def snapshot(self):
        return [[p.detach().clone() for p in piece] for piece in self.pieces()]

    def ratios(self, before):
        out = []
        for piece, olds in zip(self.pieces(), before):
            up = torch.stack([torch.norm(p.detach() - o) for p, o in zip(piece, olds)]).norm()
            size = torch.stack([torch.norm(o) for o in olds]).norm()
            out.append((up / size).item())
        return out


def log_step(model, batch, optimizer, max_norm, per="group"):
    logger = StepLogger(optimizer, per)
    inputs, targets = batch
    optimizer.zero_grad()
    scores = model(inputs)
    loss = F.cross_entropy(scores, targets)
    loss.backward()
    everything = [p for g in optimizer.param_groups for p in g["params"]]
    pre_clip = torch.nn.utils.clip_grad_norm_(everything, max_norm).item()
    before = logger.snapshot()
    optimizer.step()
    k = scores.shape[-1]
    return {"loss": loss.item(), "uniform_loss": -math.log(1.0 / k), "grad_norm": pre_clip,
            "update_ratios": logger.ratios(before)}
