# false positive (redteam7): training-loop, a CORRECT answer refused for marks because it keeps a
# history dict keyed "train" / "eval" (the usual name of the validation split).
# Why: judge/introspection.py's _harmless() treats a string without a space as a possible computed
# name, and "eval" is in NAMES. The text "eval" can only become the builtin through a door the scan
# already refuses by name (getattr on builtins, __import__, importlib...), so the word alone opens
# nothing; the same is true of "compile", "signal", "mock", "inspect" as dict keys or enum values
# (class Mode(enum.Enum): EVAL = "eval" is refused the same way).
# Control: the same file with "eval" spelled "val": marks PASSED.
# Expected: PASSED. Observed (2026-12-03): practice PASSED, marks FORBIDDEN ("the text 'eval' at line
# 50 (and 1 more) can reach into grind's own code").
import copy
import math

import torch
from torch import nn

_NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
          nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def _groups(model, weight_decay):
    decayed, plain, seen = [], [], set()
    for owner in model.modules():
        for pname, param in owner.named_parameters(recurse=False):
            if id(param) in seen or not param.requires_grad:
                continue
            seen.add(id(param))
            if pname == "bias" or isinstance(owner, _NORMS):
                plain.append(param)
            else:
                decayed.append(param)
    return [{"params": decayed, "weight_decay": weight_decay}, {"params": plain, "weight_decay": 0.0}]


def _multiplier(step, warmup, total, floor):
    if step < warmup:
        return (step + 1) / warmup
    t = min(1.0, (step - warmup) / max(1, total - warmup - 1))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * t))


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    xs, ys = train
    xv, yv = val
    opt = make_optimizer(_groups(model, weight_decay), lr)
    micro_starts = list(range(0, len(xs), micro_size))
    updates = [micro_starts[i:i + accumulation] for i in range(0, len(micro_starts), accumulation)]
    total = epochs * len(updates)
    history = {"train": [], "eval": []}  # HISTORY
    best, best_state, step = math.inf, None, 0
    for _epoch in range(epochs):
        model.train()
        for chunk in updates:
            n = sum(len(xs[s:s + micro_size]) for s in chunk)
            opt.zero_grad()
            running = 0.0
            for s in chunk:
                loss = loss_fn(model(xs[s:s + micro_size]), ys[s:s + micro_size]).sum() / n
                loss.backward()
                running += loss.item()
            history["train"].append(running)  # HISTORY
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            for g in opt.param_groups:
                g["lr"] = lr * _multiplier(step, warmup, total, min_ratio)
            opt.step()
            step += 1
        model.eval()
        with torch.no_grad():
            score = loss_fn(model(xv), yv).mean().item()
        history["eval"].append(score)  # HISTORY
        if score < best:
            best, best_state = score, copy.deepcopy(model.state_dict())
    return best_state
