# false positive (redteam7): training-loop, a CORRECT answer refused for marks because it logs a failed
# backward with the standard library's logging and exc_info=True before re-raising.
# Why: judge/introspection.py refuses any keyword argument whose name is in ATTRIBUTES, and
# "exc_info" is there for sys.exc_info (a traceback reaches frames). logging's exc_info=True keyword
# hands out nothing to the caller: the traceback goes to the log record's formatter. The README's
# list says `sys.exc_info`, not the keyword.
# Control: tl without the try/except (training_loop_fp_eval_key.py with "val"): marks PASSED.
# Expected: PASSED. Observed (2026-12-03): practice PASSED, marks FORBIDDEN ("exc_info= at line 64").
import copy
import logging
import math

import torch
from torch import nn

log = logging.getLogger(__name__)

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
    history = {"train": [], "val": []}  # HISTORY
    best, best_state, step = math.inf, None, 0
    for _epoch in range(epochs):
        model.train()
        for chunk in updates:
            n = sum(len(xs[s:s + micro_size]) for s in chunk)
            opt.zero_grad()
            running = 0.0
            for s in chunk:
                loss = loss_fn(model(xs[s:s + micro_size]), ys[s:s + micro_size]).sum() / n
                try:
                    loss.backward()
                except RuntimeError:
                    log.error("backward failed at update %d", step, exc_info=True)
                    raise
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
        history["val"].append(score)  # HISTORY
        if score < best:
            best, best_state = score, copy.deepcopy(model.state_dict())
    return best_state
